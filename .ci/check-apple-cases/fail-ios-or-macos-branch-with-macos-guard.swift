// expect: reachable on iOS 13
// The branch is compiled for iOS as well as macOS: the macOS-only guard leaves iOS out.
import Foundation

#if os(iOS) || os(macOS)
func load(_ request: URLRequest) async throws -> Data? {
    if #available(macOS 12, *) {
        return try await URLSession.shared.data(for: request).0
    }
    return nil
}
#endif
