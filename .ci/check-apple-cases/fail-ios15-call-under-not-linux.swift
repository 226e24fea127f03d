// expect: URLSession's async
// `#if !os(Linux)` is compiled on every Apple platform: the call needs its #available there.
import Foundation

#if !os(Linux)
func fetch(_ request: URLRequest) async throws -> Data {
    let (data, _) = try await URLSession.shared.data(for: request)
    return data
}
#endif
