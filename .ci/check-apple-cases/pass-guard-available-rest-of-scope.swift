import Foundation

func load(_ request: URLRequest) async throws -> Data? {
    guard #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) else {
        return nil
    }
    let (data, _) = try await URLSession.shared.data(for: request)
    DispatchQueue.main.async {
        print(Date.now)
    }
    return data
}
