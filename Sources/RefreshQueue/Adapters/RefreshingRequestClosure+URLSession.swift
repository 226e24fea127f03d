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

extension URLSession {
    /// A data task as an `async` call, on every OS version the package supports, cancelled with
    /// the calling task.
    fileprivate func transfer(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = Locked(TransferHandle.notStarted)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        let cancelled =
                            (error as? URLError)?.code == .cancelled
                            && handle.withLock { if case .cancelled = $0 { return true } else { return false } }
                        continuation.resume(throwing: cancelled ? CancellationError() : error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let cancelledAlready = handle.withLock { handle -> Bool in
                    if case .cancelled = handle { return true }
                    handle = .started(task)
                    return false
                }
                if cancelledAlready { task.cancel() }
                task.resume()
            }
        } onCancel: {
            let task = handle.withLock { handle -> URLSessionDataTask? in
                defer { handle = .cancelled }
                if case .started(let task) = handle { return task }
                return nil
            }
            task?.cancel()
        }
    }
}

/// The data task of a transfer, for cancellation that may come before or after it starts.
private enum TransferHandle: @unchecked Sendable {
    case notStarted
    case started(URLSessionDataTask)
    case cancelled
}
