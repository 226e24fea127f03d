// Only macOS compiles this branch, so only macOS needs the guard.
import Foundation

#if os(macOS)
func load(_ request: URLRequest) async throws -> Data? {
    if #available(macOS 12, *) {
        return try await URLSession.shared.data(for: request).0
    }
    return nil
}
#endif

#if os(iOS) || os(tvOS)
func pause() async throws {
    if #available(iOS 16, tvOS 16, *) {
        try await Task.sleep(for: .seconds(1))
    }
}
#endif
