import Foundation

func load(_ request: URLRequest, on session: URLSession) async throws -> Data? {
    if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
        let (data, _) = try await session
            .data(for: request)
        return data
    } else if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *) {
        try await Task.sleep(for: .milliseconds(10))
    }
    return nil
}
