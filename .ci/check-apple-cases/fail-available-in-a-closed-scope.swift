// expect: URLSession's async
// The `#available` above guards only its own block, which has closed before the call.
import Foundation

func load(_ request: URLRequest, on session: URLSession) async throws -> Data {
    if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
        print("new enough")
    }
    let (data, _) = try await session.data(for: request)
    return data
}
