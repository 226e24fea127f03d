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
public final class AuthorizationTask: @unchecked Sendable {
    /// The completion handler of an authorization.
    typealias Completion = @Sendable (Result<URLRequest, any Error>) -> Void

    private enum Status {
        /// Waiting; `canceller` (a ``TaskCancelling``) is told when the task is cancelled, and
        /// let go of on completion. Held as a plain reference: an existential would make every
        /// waiting request eight bytes larger, for a cast made only on cancellation.
        case waiting(Completion, canceller: AnyObject?)
        case completed
        case cancelled
    }

    /// The request as it was handed in, unsigned.
    let request: URLRequest

    /// Its place in arrival order among the requests that waited in the closure.
    let ticket: UInt64

    /// Read and written only under `SharedLocks.withLock(for: self)`: a waiting request is a
    /// single small allocation, with no mutex of its own.
    private var status: Status

    /// A task that completed before it was handed out (the request was signed without waiting).
    static let finished = AuthorizationTask()

    init(request: URLRequest, ticket: UInt64, canceller: (any TaskCancelling)?, completion: @escaping Completion) {
        self.request = request
        self.ticket = ticket
        self.status = .waiting(completion, canceller: canceller)
    }

    private init() {
        request = URLRequest(url: URL(fileURLWithPath: "/"))
        ticket = 0
        status = .completed
    }

    /// Whether ``cancel()`` completed the request.
    public var isCancelled: Bool {
        SharedLocks.withLock(for: self) {
            if case .cancelled = status { return true }
            return false
        }
    }

    /// Whether the request has completed, signed, failed or cancelled.
    public var isCompleted: Bool {
        SharedLocks.withLock(for: self) {
            if case .waiting = status { return false }
            return true
        }
    }

    /// Completes the request with ``RefreshQueueError/cancelled`` unless it has completed already.
    public func cancel() {
        guard let (completion, canceller) = finish(as: .cancelled) else { return }
        completion(.failure(RefreshQueueError.cancelled))
        (canceller as? any TaskCancelling)?.taskCancelled(ticket: ticket)
    }

    /// Calls the completion handler unless it was called before. The first call wins.
    func complete(_ result: Result<URLRequest, any Error>) {
        finish(as: .completed)?.completion(result)
    }

    /// Moves a waiting task to `status` and hands back what it was waiting with; `nil` when it
    /// had finished already.
    private func finish(as final: Status) -> (completion: Completion, canceller: AnyObject?)? {
        SharedLocks.withLock(for: self) {
            guard case .waiting(let completion, let canceller) = status else { return nil }
            status = final
            return (completion, canceller)
        }
    }
}

/// Who hears that a waiting task was cancelled, so that it stops waiting in line.
protocol TaskCancelling: AnyObject, Sendable {
    func taskCancelled(ticket: UInt64)
}
