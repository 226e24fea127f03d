import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request handed to ``RefreshingRequestClosure/authorize(_:completion:)``, which you can cancel
/// while it waits for a refresh.
///
/// Cancelling a waiting request completes it at once with ``RefreshQueueError/cancelled``; it is
/// never signed or sent, and it stops counting as waiting. Cancelling a request that has already
/// completed does nothing.
public final class AuthorizationTask: Sendable {
    /// The completion handler of an authorization.
    typealias Completion = @Sendable (Result<URLRequest, any Error>) -> Void

    private enum Status {
        /// Waiting; `canceller` is told when the task is cancelled, and let go of on completion.
        case waiting(Completion, canceller: (any TaskCancelling)?)
        case completed
        case cancelled
    }

    /// The request as it was handed in, unsigned.
    let request: URLRequest

    /// Its place in arrival order among the requests that waited in the closure.
    let ticket: UInt64

    private let status: Locked<Status>

    /// A task that completed before it was handed out (the request was signed without waiting).
    static let finished = AuthorizationTask()

    init(request: URLRequest, ticket: UInt64, canceller: (any TaskCancelling)?, completion: @escaping Completion) {
        self.request = request
        self.ticket = ticket
        self.status = Locked(.waiting(completion, canceller: canceller))
    }

    private init() {
        request = URLRequest(url: URL(fileURLWithPath: "/"))
        ticket = 0
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
        let taken: (Completion, (any TaskCancelling)?)? = status.withLock { status in
            guard case .waiting(let completion, let canceller) = status else { return nil }
            status = .cancelled
            return (completion, canceller)
        }
        guard let (completion, canceller) = taken else { return }
        completion(.failure(RefreshQueueError.cancelled))
        canceller?.taskCancelled(ticket: ticket)
    }

    /// Calls the completion handler unless it was called before. The first call wins.
    func complete(_ result: Result<URLRequest, any Error>) {
        let completion: Completion? = status.withLock { status in
            guard case .waiting(let completion, _) = status else { return nil }
            status = .completed
            return completion
        }
        completion?(result)
    }
}

/// Who hears that a waiting task was cancelled, so that it stops waiting in line.
protocol TaskCancelling: AnyObject, Sendable {
    func taskCancelled(ticket: UInt64)
}
