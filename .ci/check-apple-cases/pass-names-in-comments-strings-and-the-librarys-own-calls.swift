// URLSession.shared.data(for: request), Task.sleep(for: .seconds(1)), Date.now and Mutex in a
// comment are not calls. /* Nor in a block comment: OSAllocatedUnfairLock, Logger(). */
import Foundation

struct Client {
    func data(for request: URLRequest, using session: URLSession) async throws -> (Data, URLResponse) {
        fatalError("the library's own: works everywhere")
    }
}

func fetch(_ client: Client, _ request: URLRequest) async throws -> Data {
    let hint = "call URLSession.shared.data(for: request) or Task.sleep(for:) on iOS 15"
    let raw = #"Date.now and "Mutex" { unbalanced brace"#
    let block = """
        Logger(subsystem:) and .nanoseconds(Int(x * 1e9)) { in a multi-line string
        """
    print(hint, raw, block, "\(request.url?.absoluteString ?? "none")")
    let (data, _) = try await client
        .data(for: request, using: .shared)
    return data
}
