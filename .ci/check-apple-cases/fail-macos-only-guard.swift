// expect: reachable on iOS 13, tvOS 13, watchOS 6
// `*` means the other platforms at their minimum: iOS 13 is not covered.
import Foundation

func load(_ request: URLRequest) async throws -> Data? {
    if #available(macOS 12, *) {
        return try await URLSession.shared.data(for: request).0
    }
    return nil
}
