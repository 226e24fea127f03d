import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// Sends `request` through `session`, signed; if the server answers 401, refreshes (once for
    /// all requests that carried the same token) and sends it once more.
    ///
    /// Plain `URLSession` code needs nothing else:
    ///
    /// ```swift
    /// let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
    /// ```
    ///
    /// The request is retried at most once, so a server that rejects every token cannot cause a
    /// loop; the answer to the retry is returned whatever it is. Requests for which
    /// `requiresAuthentication` returns `false` are sent unsigned and never retried. Cancelling
    /// the task cancels the waiting or the transfer and throws `CancellationError`.
    ///
    /// - Throws: A ``RefreshQueueError`` when the request could not be signed, `CancellationError`,
    ///   or the session's error (a `URLError`).
    public func data(for request: URLRequest, using session: URLSession) async throws -> (Data, URLResponse) {
        let signed = try await authorize(request)
        let (data, response) = try await session.transfer(signed)
        guard (response as? HTTPURLResponse)?.statusCode == 401, requiresAuthentication(request) else {
            return (data, response)
        }
        let resigned = try await reauthorize(signed)
        return try await session.transfer(resigned)
    }
}
