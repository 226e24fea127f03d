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
        /// A refresh to start.
        var refresh: StartRefresh?
        /// Fire ``RefreshStateMachine/timerFired(now:)`` at this time (the closure's clock).
        var waitTimer: TimeInterval?
        /// Fire ``RefreshStateMachine/abandonLimitReached(attempt:now:)`` for this attempt.
        var abandonTimer: AbandonTimer?
        /// Events for the app's `onEvent`, in order.
        var events: [RefreshEvent] = []
        /// Values the change replaced: released after the lock (their deinit may be user code).
        var displaced: [any Sendable] = []
        /// A request taken out of the machine by its cancellation: the driver completes it with
        /// ``RefreshQueueError/cancelled``.
        var cancelled: Waiter?

        /// Whether there is nothing to do.
        var isEmpty: Bool {
            queue == .none && !schedulePump && answers == nil && refresh == nil && waitTimer == nil
                && abandonTimer == nil && events.isEmpty && displaced.isEmpty && cancelled == nil
        }
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
        /// `find()` found nothing: the driver applies its missing-authentication policy.
        case missing
    }

    /// Call `refresh()` on `credential`'s authentication; report its end with `attempt`.
    struct StartRefresh: Sendable {
        let attempt: UInt64
        let credential: HeldCredential
        /// A refresh ahead: nobody waits for it (yet).
        let ahead: Bool
    }

    struct AbandonTimer: Sendable, Equatable {
        let attempt: UInt64
        let at: TimeInterval
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
        case failed(RefreshFailure)
        /// The store did not take the result (a logout or another login happened meanwhile):
        /// forget what was refreshed and load afresh.
        case superseded
    }

    /// A failed refresh and what its error says, read outside the lock.
    struct RefreshFailure: Sendable {
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

extension RefreshStateMachine {
    /// Who delivers answers: nobody, or one deliverer, who also delivers the groups handed out
    /// while it delivers, in the order they were handed out.
    enum Delivery: Sendable {
        case idle
        /// `current`: the group being delivered, kept here so that a cancellation can still take
        /// one of its waiters before its completion is called. `inOrder`: each deferred group's
        /// tickets all come after those of the group before it (as groups handed out one after
        /// another nearly always do), so that a ticket's group is found by binary search.
        case busy(current: Answers, deferred: [Answers], inOrder: Bool)

        /// The groups waiting for the deliverer.
        var deferred: [Answers] {
            guard case .busy(_, let deferred, _) = self else { return [] }
            return deferred
        }

        var isBusy: Bool {
            guard case .busy = self else { return false }
            return true
        }

        /// The group handed out and not yet delivered that holds the waiter with `ticket`, and
        /// its place there; `nil` when no such group holds it. A cancellation asks, under the
        /// closure's lock: however many groups wait for a slow deliverer, it costs O(log n).
        func place(of ticket: UInt64) -> (group: Answers, index: Int)? {
            guard case .busy(let current, let deferred, let inOrder) = self else { return nil }
            if let index = current.index(of: ticket) { return (current, index) }
            guard inOrder else {
                for group in deferred {
                    if let index = group.index(of: ticket) { return (group, index) }
                }
                return nil
            }
            // The first group whose tickets do not all come before `ticket`.
            var low = 0
            var high = deferred.count
            while low < high {
                let middle = low + (high - low) / 2
                if let tickets = deferred[middle].tickets, tickets.upperBound < ticket {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            guard low < deferred.count, let index = deferred[low].index(of: ticket) else { return nil }
            return (deferred[low], index)
        }

        /// Hands `group` out: to the caller (returned) when nobody delivers, else to the
        /// deliverer, after the groups already waiting for it.
        mutating func handOut(_ group: Answers) -> Answers? {
            guard case .busy(let current, var deferred, var inOrder) = self else {
                self = .busy(current: group, deferred: [], inOrder: true)
                return group
            }
            self = .idle  // so that the list is not shared, and the append does not copy it
            // An empty group has no place in that order.
            if inOrder, let tickets = group.tickets {
                inOrder = deferred.last?.tickets.map { $0.upperBound < tickets.lowerBound } ?? true
            } else {
                inOrder = false
            }
            deferred.append(group)
            self = .busy(current: current, deferred: deferred, inOrder: inOrder)
            return nil
        }

        /// The deliverer is done with its group: the next one waiting for it, or `nil` (and idle)
        /// when none is left; and the group just delivered, handed back rather than released
        /// here, under the closure's lock: its completions may hold the last references to the
        /// app's objects, whose `deinit` is user code.
        mutating func next() -> (next: Answers?, done: Answers?) {
            guard case .busy(let current, var deferred, let inOrder) = self else { return (nil, nil) }
            self = .idle  // as in `handOut(_:)`
            guard !deferred.isEmpty else { return (nil, current) }
            let next = deferred.removeFirst()
            self = .busy(current: next, deferred: deferred, inOrder: inOrder || deferred.isEmpty)
            return (next, current)
        }
    }
}
