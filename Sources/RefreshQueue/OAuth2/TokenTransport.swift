import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``TokenEndpointClient``'s requests travel: through a session of its own, made from the
/// configuration of the session the app gave the client, whose delegate keeps the client's
/// secrets and memory safe whatever that session does.
///
/// - **No redirects.** A token request carries the client secret and the refresh token; on Linux,
///   URLSession copies every header (and `Authorization`) onto a redirect to any host. Redirects
///   are refused: the 3xx answer itself is the result.
/// - **Bounded memory.** An answer whose `Content-Length` passes the size limit is refused before
///   its body is read; a body without a length is kept only up to the limit, and the transfer is
///   cancelled as soon as it passes it. (On Linux, URLSession may go on delivering part of a body
///   for a moment after the cancellation; nothing of it is kept.)
/// - **Bounded time.** The transfer is cancelled at its deadline (Linux does not enforce
///   `timeoutIntervalForResource`).
/// - **Refused client credentials end.** On Linux, an HTTP authentication challenge (a token
///   endpoint's `WWW-Authenticate: Basic` for a wrong secret, or a proxy's) is refused at once
///   instead of hanging URLSession there. The 401 is still the result, with as much of its body
///   as had come (its RFC 6749 error, `Retry-After`); the client reports it as `invalid_client`
///   when it names no error. On Apple platforms the system answers the challenge (see
///   ``HTTPChallengeHandling``): the 401 arrives whole, and an authenticating proxy gets the
///   credentials the system keeps for it.
///   Server-trust challenges go to the app session delegate's session-level method, if it has one
///   (pinning done there keeps working), else get the default handling.
final class TokenTransport: Sendable {
    /// The session the app gave; only its configuration and delegate are used.
    let appSession: URLSession
    private let session: URLSession
    private let delegate: TokenTransferDelegate

    init(_ appSession: URLSession, challenges: HTTPChallengeHandling = .platform) {
        self.appSession = appSession
        delegate = TokenTransferDelegate(appSession: appSession, challenges: challenges)
        session = URLSession(configuration: appSession.configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The answer to `request`: its body (at most `limit` bytes) and response.
    ///
    /// - Throws: ``OAuth2Error/responseTooLarge`` past `limit`; ``OAuth2Error/tokenEndpoint(_:)``
    ///   with `invalid_client` when the server challenged the client's credentials;
    ///   ``OAuth2Error/transport(_:)`` (`URLError(.timedOut)` at the deadline); `CancellationError`
    ///   when the calling task is cancelled.
    func transfer(_ request: URLRequest, limit: Int, deadline: DispatchTime) async throws -> (Data, URLResponse) {
        let relay = CancellationRelay()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request)
                delegate.register(task, limit: limit, continuation: continuation)
                let delegate = self.delegate
                DispatchQueue.refreshQueueDeadlines.asyncAfter(deadline: deadline) { [weak task] in
                    guard let task else { return }
                    delegate.stop(task, because: .timedOut)
                }
                let transfer = CancellableTokenTransfer(task: task, delegate: delegate)
                if !relay.start(transfer) { transfer.cancel() }
                task.resume()
            }
        } onCancel: {
            relay.cancel()?.cancel()
        }
    }
}

/// A token transfer as a cancellation handler stops it: through the delegate, which records why.
private struct CancellableTokenTransfer: RelayedOperation {
    let task: URLSessionDataTask
    let delegate: TokenTransferDelegate

    func cancel() {
        delegate.stop(task, because: .cancelled)
    }
}

/// Why a token transfer was stopped before it ended on its own.
enum TransferStop: Sendable {
    case timedOut
    case cancelled
    case tooLarge
    case challengeRefused
}

/// The delegate of a ``TokenTransport``'s session: one state per running task.
final class TokenTransferDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Transfer {
        let limit: Int
        let continuation: CheckedContinuation<(Data, URLResponse), any Error>
        var body = Data()
        var stop: TransferStop?
    }

    private let appSession: URLSession
    private let challenges: HTTPChallengeHandling
    private let transfers = Locked<[Int: Transfer]>([:])

    init(appSession: URLSession, challenges: HTTPChallengeHandling) {
        self.appSession = appSession
        self.challenges = challenges
    }

    func register(
        _ task: URLSessionTask, limit: Int, continuation: CheckedContinuation<(Data, URLResponse), any Error>
    ) {
        transfers.withLock { $0[task.taskIdentifier] = Transfer(limit: limit, continuation: continuation) }
    }

    /// Cancels `task`, remembering why (the first reason wins).
    func stop(_ task: URLSessionTask, because reason: TransferStop) {
        let running = transfers.withLock { transfers -> Bool in
            guard transfers[task.taskIdentifier] != nil else { return false }
            if transfers[task.taskIdentifier]?.stop == nil { transfers[task.taskIdentifier]?.stop = reason }
            return true
        }
        if running { task.cancel() }
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let limit = transfers.withLock { $0[dataTask.taskIdentifier]?.limit } ?? 0
        guard response.expectedContentLength <= Int64(limit) else {
            // Announced too large: not a byte of the body is read.
            transfers.withLock { transfers in
                if transfers[dataTask.taskIdentifier]?.stop == nil {
                    transfers[dataTask.taskIdentifier]?.stop = .tooLarge
                }
            }
            completionHandler(.cancel)
            // Linux's URLSession ignores `.cancel` here and goes on reading the body until the
            // request's deadline: cancel the task as well.
            dataTask.cancel()
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflowed = transfers.withLock { transfers -> Bool in
            guard var transfer = transfers[dataTask.taskIdentifier], transfer.stop == nil else { return false }
            guard transfer.body.count + data.count <= transfer.limit else {
                transfer.body = Data()
                transfer.stop = .tooLarge
                transfers[dataTask.taskIdentifier] = transfer
                return true
            }
            transfers[dataTask.taskIdentifier]?.body.append(data)
            return false
        }
        if overflowed { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        switch transfer.stop {
        case .tooLarge:
            transfer.continuation.resume(throwing: OAuth2Error.responseTooLarge)
        case .challengeRefused:
            if let response = task.response {
                // The 401 itself, as far as it came: the client reads its error and `Retry-After`.
                transfer.continuation.resume(returning: (transfer.body, response))
                return
            }
            transfer.continuation.resume(
                throwing: OAuth2Error.tokenEndpoint(
                    TokenEndpointError(
                        code: .invalidClient, errorDescription: "the server refused the client credentials",
                        status: 401)))
        case .timedOut:
            transfer.continuation.resume(throwing: OAuth2Error.transport(URLError(.timedOut)))
        case .cancelled:
            transfer.continuation.resume(throwing: CancellationError())
        case nil:
            if let error {
                // The code alone: the error's details name the token URL, whose query or user
                // part may hold a credential.
                let code = (error as? URLError)?.code ?? .unknown
                transfer.continuation.resume(throwing: OAuth2Error.transport(URLError(code)))
            } else if let response = task.response {
                transfer.continuation.resume(returning: (transfer.body, response))
            } else {
                transfer.continuation.resume(throwing: OAuth2Error.transport(URLError(.badServerResponse)))
            }
        }
    }

    // MARK: - URLSessionTaskDelegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never: the 3xx answer is the result, and the secrets stay where they were sent.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        switch challenges.disposition(for: challenge) {
        case nil:
            forwardToApp(challenge, completionHandler)
        case .cancelAuthenticationChallenge:
            transfers.withLock { transfers in
                if transfers[task.taskIdentifier]?.stop == nil {
                    transfers[task.taskIdentifier]?.stop = .challengeRefused
                }
            }
            completionHandler(.cancelAuthenticationChallenge, nil)
        case let disposition?:
            completionHandler(disposition, nil)
        }
    }

    /// A server-trust or client-certificate challenge: the app session's delegate decides, so that
    /// certificate pinning applies to token requests too.
    private func forwardToApp(
        _ challenge: URLAuthenticationChallenge,
        _ completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let appDelegate = appSession.delegate else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #if canImport(FoundationNetworking)
        appDelegate.urlSession(appSession, didReceive: challenge, completionHandler: completionHandler)
        #else
        // An optional requirement on Apple platforms: `nil` when the delegate does not implement it.
        let handled: Void? = appDelegate.urlSession?(
            appSession, didReceive: challenge, completionHandler: completionHandler)
        if handled == nil { completionHandler(.performDefaultHandling, nil) }
        #endif
    }
}
