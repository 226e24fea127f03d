import Foundation

func load(_ request: URLRequest) async throws -> Data? {
    if #unavailable(iOS 15, macOS 12, tvOS 15, watchOS 8) {
        return nil
    } else {
        return try await URLSession.shared.data(for: request).0
    }
}
