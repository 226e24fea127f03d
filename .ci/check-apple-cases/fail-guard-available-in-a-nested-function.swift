// expect: URLSession's async
// The guard refines only the rest of the nested function it is in.
import Foundation

func load(_ request: URLRequest) async throws -> Data {
    func check() -> Bool {
        guard #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) else { return false }
        return true
    }
    _ = check()
    return try await URLSession.shared.data(for: request).0
}
