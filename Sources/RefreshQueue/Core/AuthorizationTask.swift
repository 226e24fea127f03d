import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request handed to ``RefreshingRequestClosure/authorize(_:completion:)``, which you can cancel
/// while it waits for a refresh.
///
/// Cancelling a waiting request completes it at once with ``RefreshQueueError/cancelled``; it is
/// never signed or sent. Cancelling a request that has already completed does nothing.
public final class AuthorizationTask: Sendable {
    /// The completion handler of an authorization.
    typealias Completion = @Sendable (Result<URLRequest, any Error>) -> Void

    private enum Status {
        case waiting(Completion)
        case completed
        case cancelled
    }

    /// The request as it was handed in, unsigned.
    let request: URLRequest

    /// Its place in arrival order among the requests that went through the closure's queue.
    let ticket: UInt64

    /// For a request the server rejected (HTTP 401): the generation of the authentication that
    /// signed it, if that is still the one held. That generation is then refreshed even though it
    /// does not say it needs to be.
    let rejectedGeneration: UInt64?

    private let status: Locked<Status>

    /// A task that completed before it was handed out (the request was signed without waiting).
    static let finished = AuthorizationTask()

    init(request: URLRequest, ticket: UInt64, rejectedGeneration: UInt64?, completion: @escaping Completion) {
        self.request = request
        self.ticket = ticket
        self.rejectedGeneration = rejectedGeneration
        self.status = Locked(.waiting(completion))
    }

    private init() {
        request = URLRequest(url: URL(fileURLWithPath: "/"))
        ticket = 0
        rejectedGeneration = nil
        status = Locked(.completed)
    }

    /// Whether ``cancel()`` completed the request.
    public var isCancelled: Bool {
        status.withLock { status in
            if case .cancelled = status { return true }
            return false
        }
    }

    /// Whether the request has completed, signed, failed or cancelled.
    public var isCompleted: Bool {
        status.withLock { status in
            if case .waiting = status { return false }
            return true
        }
    }

    /// Completes the request with ``RefreshQueueError/cancelled`` unless it has completed already.
    public func cancel() {
        finish(.failure(RefreshQueueError.cancelled), cancelling: true)
    }

    /// Calls the completion handler unless it was called before. The first call wins.
    func complete(_ result: Result<URLRequest, any Error>) {
        finish(result, cancelling: false)
    }

    private func finish(_ result: Result<URLRequest, any Error>, cancelling: Bool) {
        let completion: Completion? = status.withLock { status in
            guard case .waiting(let completion) = status else { return nil }
            status = cancelling ? .cancelled : .completed
            return completion
        }
        completion?(result)
    }
}
