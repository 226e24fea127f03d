import Foundation

/// Everything a ``RefreshingRequestClosure`` decides, as a value: events in, actions out.
///
/// No locks, no Dispatch, no user code, no clock: the driver calls one `mutating` method per
/// event while holding its lock, passing the time and whatever it read from user code, and then
/// performs the returned ``Actions``. That makes every transition testable with plain calls.
///
/// ```
///            request, nothing held          found               fresh / recommended
///   (empty) ───────────────────────► loading ─────► evaluating ───────────────────► answer in order
///                                                      │ needed                        (recommended:
///                                                      ▼                                refresh ahead)
///                       ┌────────────── held: queue suspended, refresh running ◄── join if running
///                       │ refresh ends: sign (or fail) every waiter, resume, pump again
///                       │ a waiter's timeout: fail it; the refresh keeps running
///                       │ abandon limit: forget the refresh; waiters decide again
/// ```
///
/// The rules it keeps:
/// - At most one refresh runs at a time, so never two of the same token. Timeouts belong to
///   waits, not to the refresh: waiters fail after `refreshTimeout`, the refresh runs on, later
///   requests join it. Only at `abandonAfter` is it forgotten and may a new one start.
/// - The line is answered strictly in arrival order; while anyone waits in it, nobody is signed
///   past it. Answers are delivered one group at a time, in the order they were handed out,
///   whichever thread hands them out (``delivered()``).
/// - The queue is suspended exactly while the line is held by a refresh.
/// - A refresh's result is adopted only in the epoch it started in (``invalidate(now:)`` and
///   ``adopt(_:now:)`` start a new one) and only if no later attempt's result was adopted; a
///   copy of what it refreshed, found again after ``invalidate(now:)``, is forgotten when it
///   succeeds, so that `find()` is asked again; a failure forgets only the generation it
///   refreshed.
struct RefreshStateMachine: Sendable {
    struct Configuration: Sendable {
        /// How long a request may wait.
        var refreshTimeout: TimeInterval
        /// When a refresh that has not ended is given up.
        var abandonAfter: TimeInterval
        var window: RefreshWindow
    }

    let configuration: Configuration

    // MARK: - State
    //
    // Internal, not private, only so that the machine's extensions in the files next to this one
    // can use it: nothing else reads or writes it (the driver sees `Actions` and `snapshot`).

    /// The authentication that signs, if one is held.
    var credential: Held?
    /// The waiting requests, in arrival order.
    var line = WaitLine()
    /// What the line is waiting for.
    var linePhase: LinePhase = .moving
    /// The refresh in flight, if any.
    var refresh: Attempt?
    /// Attempts given up at the abandon limit whose result may still arrive.
    var abandoned: [Attempt] = []
    /// `refreshIfNeeded` callers waiting for the refresh ahead in flight.
    var probes: [Waiter] = []
    /// Waiters in the line up to this ticket are answered this way, without another look.
    var approval: Approval?
    var epoch: UInt64 = 0
    var generations: UInt64 = 0
    var attempts: UInt64 = 0
    var lastAdoptedAttempt: UInt64 = 0
    var nextTicket: UInt64 = 0
    /// The driver's, kept here under the same lock: the ledger it hands to the tasks of requests
    /// that start waiting. The machine never reads it.
    var taskLedger: CancellationLedger?
    /// A pump is enqueued or running; it asks for the next step until told `idle`.
    var pumpPending = false
    /// Waiters handed out for answering and not yet reported answered.
    var unanswered = 0
    /// Whether a group of answers is being delivered, and the groups handed out meanwhile.
    var delivery = Delivery.idle
    /// The earliest wait timer armed and not yet fired.
    var timerDeadline: TimeInterval?
    /// When refreshes that a loop caused were counted against the refresh window.
    var recentRefreshes: [StartedRefresh] = []
    /// The window refused a refresh, and no refresh has started since: the refusal was reported.
    var refusingRefreshes = false
    /// No refresh before `until`: the server asked for a pause (`Retry-After`).
    var retryAfter: Backoff?
    /// When the current hold began and how many requests it held.
    var hold: HoldRecord?
    /// The header values of what refreshes that succeeded after an `invalidate()` refreshed, while
    /// the current `find()` ran: a copy it read of one of them is spent (see ``found(_:now:)``).
    var spentWhileLoading: [String] = []
    /// The header values the server rejected (HTTP 401) while nothing was held, after an
    /// `invalidate()`: a copy `find()` reads of one of them is known stale, and is refreshed
    /// rather than sent again (see ``found(_:now:)``).
    var rejectedWhileUnheld: [String] = []

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Reading

    /// The credential to sign with at once: one is held, nobody waits or is being answered, and
    /// it is not known to be stale.
    func fastPath() -> FastPath? {
        guard line.isEmpty, unanswered == 0, !pumpPending, let credential, !credential.knownStale else { return nil }
        let wantsRecommendation = refresh == nil && !credential.aheadGivenUp
        return FastPath(
            credential: credential.value, generation: credential.generation,
            recommendationAfter: wantsRecommendation ? credential.aheadNotBefore : nil)
    }

    /// When the first waiter that only a timer can answer must be answered: the front of a line
    /// waiting for a refresh or for `find()`, or the first probe waiting for a refresh ahead.
    var earliestWaitDeadline: TimeInterval? {
        var earliest: TimeInterval?
        switch linePhase {
        case .held, .loading, .evaluating: earliest = line.first?.arrivedAt
        case .moving: break
        }
        if let probe = probes.first?.arrivedAt { earliest = min(earliest ?? probe, probe) }
        return earliest.map { $0 + configuration.refreshTimeout }
    }

    /// Whether the serial queue is suspended now.
    var isQueueSuspended: Bool { linePhase == .held }
}

// MARK: - Parts of the state

extension RefreshStateMachine {
    /// What the line waits for.
    enum LinePhase: Sendable, Equatable {
        /// Nothing: the pump moves it (it is scheduled whenever the line is not empty).
        case moving
        /// The pump calls `find()` for the front, in `epoch`.
        case loading(epoch: UInt64)
        /// The pump reads the held credential's freshness.
        case evaluating(generation: UInt64)
        /// The running refresh: the queue is suspended.
        case held
    }

    /// The held credential and what is known of it.
    struct Held: Sendable {
        let value: HeldCredential
        let generation: UInt64
        let epoch: UInt64
        /// A refresh is needed (read once; staleness only grows) or the server rejected it.
        var knownStale = false
        /// Failed refreshes ahead of this generation, and when the next may start.
        var aheadFailures = 0
        var aheadNotBefore: TimeInterval = -.infinity
        /// A refresh ahead failed in a way only a new login cures: do not try again ahead.
        var aheadGivenUp = false
        /// It is the result of a refresh: the server rejecting it is a sign of a loop.
        var issuedByRefresh = false
    }

    struct Attempt: Sendable {
        let id: UInt64
        let generation: UInt64
        let epoch: UInt64
        let startedAt: TimeInterval
        let ahead: Bool
        /// The header value of the authentication it refreshes: one found again after
        /// ``RefreshStateMachine/invalidate(now:)`` that carries it is the very one refreshed.
        let refreshedHeader: String?
        /// Which of its waiters timed out, if any.
        var timedOut = TimedOut.none
        /// Some of its waiters timed out: a success is adopted late.
        var waitersTimedOut: Bool { timedOut != .none }

        /// Which waiters of a refresh timed out.
        enum TimedOut: Sendable {
            case none
            /// Only `refreshIfNeeded` probes: nobody needed the token.
            case probes
            /// Requests the line held for it: a refresh ahead that they joined once the token was
            /// needed, then fails, fails as a needed refresh does.
            case requests
        }
    }

    struct Approval: Sendable {
        let throughTicket: UInt64
        let outcome: Outcome
    }

    struct HoldRecord: Sendable {
        let startedAt: TimeInterval
        var requests: Int
    }
}

/// A refresh counted against the refresh window.
struct StartedRefresh: Sendable {
    let startedAt: TimeInterval
}

/// A `Retry-After` in force: until `until`, refreshes fail with `error`.
struct Backoff: Sendable {
    let until: TimeInterval
    let error: RefreshQueueError
}

extension RefreshStateMachine {
    /// What the machine holds, for tests and assertions: read-only, never used to decide.
    struct Snapshot {
        /// The held credential and its generation.
        let credential: HeldCredential?
        let generation: UInt64?
        /// Waiters in the line, and those waiting beside it for a refresh ahead.
        let waiting: Int
        let probes: Int
        /// Whether the line is held by a refresh (the queue is suspended).
        let isHeld: Bool
        /// Whether the line moves and is empty or has a pump to move it.
        let isMoving: Bool
        let pumpPending: Bool
        let unanswered: Int
        /// Whether a group of answers is being delivered, and the waiters of the groups waiting
        /// for its deliverer.
        let delivering: Bool
        let deferred: Int
        /// The running refresh: its attempt and the generation it refreshes.
        let refreshAttempt: UInt64?
        let refreshGeneration: UInt64?
        /// The earliest moment a waiter must be answered by a timer, if any waits for one.
        let earliestWaitDeadline: TimeInterval?
        /// The wait timer the machine believes is armed.
        let armedWaitTimer: TimeInterval?
    }

    var snapshot: Snapshot {
        return Snapshot(
            credential: credential?.value, generation: credential?.generation, waiting: line.count,
            probes: probes.count, isHeld: linePhase == .held, isMoving: linePhase == .moving,
            pumpPending: pumpPending, unanswered: unanswered, delivering: delivery.isBusy,
            deferred: delivery.deferred.reduce(0) { $0 + $1.waiters.count }, refreshAttempt: refresh?.id,
            refreshGeneration: refresh?.generation,
            earliestWaitDeadline: earliestWaitDeadline, armedWaitTimer: timerDeadline)
    }
}
