// expect: URLSession's async
// The receiver on one line, the call on the next.
import Foundation

func load(_ request: URLRequest) async throws -> Data {
    let (data, _) = try await URLSession.shared
        .data(for: request)
    return data
}
