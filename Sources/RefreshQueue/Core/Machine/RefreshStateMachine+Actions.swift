import Foundation

extension RefreshStateMachine {
    /// What the driver must do after an event, in this order: the queue change (under the lock,
    /// at once), then, after leaving the lock, the events, the answers, the refresh and the
    /// timers. Displaced values are released last, outside the lock.
    struct Actions: Sendable {
        /// Suspend or resume the closure's serial queue. Performed under the lock that changed
        /// the state, so that a suspension and the resumption that ends it cannot swap places.
        var queue: QueueChange = .none
        /// Enqueue a pump on the serial queue (also under the lock, after `queue`).
        var schedulePump = false
        /// Requests to answer, in order.
        var answers: Answers?
        /// A refresh to start, and when to give it up.
        var refresh: StartRefresh?
        /// Fire ``RefreshStateMachine/timerFired(deadline:now:)`` at this time (the closure's clock).
        var waitTimer: TimeInterval?
        /// Events for the app's `onEvent`, in order.
        var events: [RefreshEvent] = []
        /// Values the change replaced: released after the lock (their deinit may be user code).
        var displaced: [any Sendable] = []
        /// A request taken out of the machine by its cancellation: the driver completes it with
        /// ``RefreshQueueError/cancelled``.
        var cancelled: Waiter?
    }

    enum QueueChange: Sendable, Equatable {
        case none
        case suspend
        case resume
    }

    /// Waiters to complete, all the same way.
    struct Answers: Sendable {
        let waiters: [Waiter]
        var outcome: Outcome
        /// Which of them have been taken, by the deliverer or by a cancellation.
        let claims: DeliveryClaims
        /// Whether `waiters` are in ticket order, as a group taken from the line always is (a
        /// group of probes may not be): a waiter is then found by binary search, so that
        /// cancelling every waiter of a large group while it is delivered costs no more than
        /// delivering it.
        private let inTicketOrder: Bool
        /// The lowest and the highest ticket of the group; `nil` when it is empty.
        let tickets: ClosedRange<UInt64>?

        init(waiters: [Waiter], outcome: Outcome) {
            self.waiters = waiters
            self.outcome = outcome
            claims = DeliveryClaims(count: waiters.count)
            // By index: the tickets are read where they are, without copying a waiter.
            inTicketOrder = waiters.indices.dropFirst().allSatisfy { waiters[$0 - 1].ticket < waiters[$0].ticket }
            if inTicketOrder, let first = waiters.first, let last = waiters.last {
                tickets = first.ticket...last.ticket
            } else {
                let all = waiters.lazy.map(\.ticket)
                tickets = all.min().flatMap { low in all.max().map { low...$0 } }
            }
        }

        /// Where the waiter with `ticket` is in the group, if it is there.
        func index(of ticket: UInt64) -> Int? {
            guard inTicketOrder else { return waiters.firstIndex { $0.ticket == ticket } }
            var low = 0
            var high = waiters.count
            while low < high {
                let middle = low + (high - low) / 2
                let found = waiters[middle].ticket
                if found == ticket { return middle }
                if found < ticket {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            return nil
        }
    }

    /// How waiters are completed.
    enum Outcome: Sendable {
        /// Requests are signed with the credential's header (or fail with its error); probes
        /// succeed.
        case sign(HeldCredential)
        /// Every waiter fails with the error.
        case fail(RefreshQueueError)
        /// Requests go out as they are, unsigned (`find()` found nothing, and the
        /// missing-authentication policy says so).
        case sendUnsigned
    }

    /// Call `refresh()` on `credential`'s authentication; report its end with `attempt`, and
    /// at `abandonAt` (the closure's clock), if it has not ended, report
    /// ``RefreshStateMachine/abandonLimitReached(attempt:now:)``.
    struct StartRefresh: Sendable {
        let attempt: UInt64
        let credential: HeldCredential
        let abandonAt: TimeInterval
    }

    /// What the pump does next.
    enum PumpStep: Sendable {
        /// Perform these actions, then ask again.
        case perform(Actions)
        /// Perform these actions (a timer), call `find()`, then report with
        /// ``RefreshStateMachine/found(_:now:)``.
        case find(Actions)
        /// Perform these actions (a timer: a slow read is a wait too), read the freshness of
        /// `credential`, then report with ``RefreshStateMachine/evaluated(generation:freshness:now:)``.
        case evaluate(HeldCredential, generation: UInt64, Actions)
        /// Nothing to do: the pump ends. Perform the actions first.
        case idle(Actions)
    }

    /// How a refresh ended, as the driver read it outside the lock.
    enum RefreshResult: Sendable {
        /// A new authentication, with its freshness read at once.
        case refreshed(HeldCredential, Freshness)
        /// The refresh failed.
        case failed(Failure)
        /// The store did not take the result (a logout or another login happened meanwhile):
        /// forget what was refreshed and load afresh.
        case superseded
    }

    /// A failed refresh and what its error says, read outside the lock.
    struct Failure: Sendable {
        let error: any Error
        var isTransport = false
        var retryAfter: TimeInterval?
        var requiresReauthentication = false

        /// How the failure is reported: ``RefreshQueueError/notAuthenticated`` as it is when the
        /// refresh found nobody logged in (the stored authentication was removed by a logout or a
        /// refused refresh elsewhere), any other error wrapped in
        /// ``RefreshQueueError/refreshFailed(_:)``, which events carry and which the driver
        /// unwraps for the waiters (`requestError`).
        var answer: RefreshQueueError {
            if let known = error as? RefreshQueueError, known == .notAuthenticated { return known }
            return .refreshFailed(error)
        }
    }

    /// What the fast path may sign with.
    struct FastPath {
        let credential: HeldCredential
        let generation: UInt64
        /// Report a recommended refresh with ``RefreshStateMachine/refreshRecommended(generation:now:)``
        /// when the credential says so and the clock has reached this time; `nil`: do not.
        let recommendationAfter: TimeInterval?
    }
}
