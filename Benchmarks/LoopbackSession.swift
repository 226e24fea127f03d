import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSession` of the loopback scenario, and a plain transfer for its baseline arm.
enum LoopbackSession {
    /// An ephemeral session with enough connections for every worker and the refreshes.
    static func make(connections: Int) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = 15
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration, delegate: LoopbackSessionDelegate(), delegateQueue: nil)
    }

    /// One data task as an async call: what the library's adapter does, without the interceptor.
    static func transfer(_ request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let response {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}

/// Refuses redirects, so that the 302 of `/authorize` reaches the login code, and settles
/// authentication challenges, which URLSession on Linux otherwise leaves hanging.
final class LoopbackSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// Refuses every redirect: the caller sees the 302 itself.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Rejects every challenge, so that a 401 completes instead of hanging.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.rejectProtectionSpace, nil)
    }
}
