// expect: reachable on iOS 14, macOS 11, tvOS 14, watchOS 7
// Every platform is named, but at versions below the API's.
import Foundation

func load(_ request: URLRequest) async throws -> Data? {
    if #available(iOS 14, macOS 11, tvOS 14, watchOS 7, *) {
        return try await URLSession.shared.data(for: request).0
    }
    return nil
}
