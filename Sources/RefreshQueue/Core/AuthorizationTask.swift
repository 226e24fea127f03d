import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request handed to ``RefreshingRequestClosure/authorize(_:completion:)``, which you can cancel
/// while it waits for a refresh.
///
/// Cancelling a waiting request completes it at once with ``RefreshQueueError/cancelled``; it is
/// never signed or sent, and it stops counting as waiting. Cancelling a request that has already
/// been answered does nothing.
///
/// A task is a small value: copies stand for the same request, and keeping one does not keep the
/// closure alive. A waiting request costs no allocation of its own; the tasks of requests that
/// waited together share one record of which of them were cancelled.
public struct AuthorizationTask: Sendable {
    /// The completion handler of an authorization.
    typealias Completion = @Sendable (Result<URLRequest, any Error>) -> Void

    /// Its place in arrival order among the requests that waited in the closure.
    let ticket: UInt64

    /// What the tasks of requests that waited together share; `nil` for a request answered
    /// without waiting.
    let ledger: CancellationLedger?

    /// A task answered before it was handed out (the request was signed without waiting).
    static let finished = AuthorizationTask(ticket: 0, ledger: nil)

    init(ticket: UInt64, ledger: CancellationLedger?) {
        self.ticket = ticket
        self.ledger = ledger
    }

    /// Whether ``cancel()`` (on this task or a copy) completed the request.
    public var isCancelled: Bool {
        ledger?.wasCancelled(ticket) ?? false
    }

    /// Whether the request has been answered: signed, failed or cancelled.
    ///
    /// Once it has, its completion handler has run or is about to run with that answer, and
    /// ``cancel()`` no longer changes it.
    public var isCompleted: Bool {
        guard let ledger, let owner = ledger.owner else { return true }
        return !owner.isWaiting(ticket: ticket)
    }

    /// Completes the request with ``RefreshQueueError/cancelled`` unless it has been answered
    /// already.
    public func cancel() {
        guard let ledger, let owner = ledger.owner else { return }
        owner.cancelWaiting(ticket: ticket, recordingIn: ledger)
    }
}

/// Who keeps the waiting requests: it tells whether one still waits, and cancels one.
protocol TaskCancelling: AnyObject, Sendable {
    /// Whether the request with `ticket` still waits to be answered.
    func isWaiting(ticket: UInt64) -> Bool

    /// Completes the request with `ticket` with ``RefreshQueueError/cancelled`` if it still
    /// waits, recording its cancellation in `ledger` first.
    func cancelWaiting(ticket: UInt64, recordingIn ledger: CancellationLedger)
}

/// A waiting request, as the cancellation handler of an `async` authorization stops it.
extension AuthorizationTask: RelayedOperation {}
