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
/// Its state is a few parts, each with rules of its own: the held credential, the line and its
/// phase (a case carries what only that phase needs: the hold's start, what a refresh spent while
/// `find()` ran, the outcome a refresh's end approved the line for), the refreshes (the one
/// running, with the `refreshIfNeeded` calls that wait for it, and those given up), the
/// identifiers, the hand-out of answers, and the admission of new refreshes (``Admission``).
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
        /// What a request gets when `find()` finds nothing.
        var missingAuthentication: MissingAuthenticationPolicy = .fail
    }

    let configuration: Configuration

    // MARK: - State
    //
    // Internal, not private, only so that the machine's extensions in the files next to this one
    // can use it: the driver sees `Actions`, `fastPath()` and `snapshot`.

    /// The authentication that signs, if one is held.
    var credential: Held?
    /// The header values the server rejected (HTTP 401) while nothing was held, after an
    /// `invalidate()`: a copy `find()` reads of one of them is known stale, and is refreshed
    /// rather than sent again (see ``found(_:now:)``).
    var rejectedWhileUnheld: [String] = []
    /// The waiting requests, in arrival order.
    var line = WaitLine()
    /// What the line is waiting for, with what only that phase needs.
    var linePhase: LinePhase = .moving(approval: nil)
    /// The refresh in flight and those given up.
    var refreshes = Refreshes()
    /// The numbers that tell epochs, generations, attempts and requests apart.
    var ids = Identifiers()
    /// Who answers: the pump, and the groups of answers handed out.
    var handOut = HandOut()
    /// Whether a refresh may start: the refresh window and a `Retry-After` pause.
    var admission = Admission()
    /// The earliest wait timer armed and not yet fired.
    var timerDeadline: TimeInterval?

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Reading

    /// The credential to sign with at once: one is held, nobody waits or is being answered, and
    /// it is not known to be stale.
    func fastPath() -> FastPath? {
        guard line.isEmpty, handOut.isIdle, let credential, !credential.knownStale else { return nil }
        let wantsRecommendation = refreshes.running == nil && !credential.aheadGivenUp
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
        if let probe = refreshes.running?.probes.first?.arrivedAt { earliest = min(earliest ?? probe, probe) }
        return earliest.map { $0 + configuration.refreshTimeout }
    }

    /// The held credential and its generation, if one is held.
    var heldCredential: (HeldCredential, UInt64)? {
        credential.map { ($0.value, $0.generation) }
    }

    /// How many requests wait in the line.
    var waitingCount: Int { line.count }

    /// Whether the serial queue is suspended now.
    var isQueueSuspended: Bool { linePhase.isHeld }
}

// MARK: - Parts of the state

extension RefreshStateMachine {
    /// What the line waits for, with what only that phase needs.
    enum LinePhase: Sendable {
        /// Nothing: the pump moves it (it is scheduled whenever the line is not empty). Waiters
        /// up to the approval's ticket are answered its way, without another look.
        case moving(approval: Approval?)
        /// The pump calls `find()` for the front, in `epoch`. `spent`: the header values of what
        /// refreshes that succeeded after an `invalidate()` refreshed while `find()` ran; a copy
        /// it read of one of them is spent (see ``found(_:now:)``).
        case loading(epoch: UInt64, spent: [String])
        /// The pump reads the held credential's freshness.
        case evaluating(generation: UInt64)
        /// The running refresh holds the line: the queue is suspended.
        case held(HoldRecord)

        var isMoving: Bool {
            if case .moving = self { return true }
            return false
        }

        var isHeld: Bool {
            if case .held = self { return true }
            return false
        }

        /// The phase's name, without what it carries, for a failed precondition's message.
        var name: String {
            switch self {
            case .moving: return "moving"
            case .loading: return "loading"
            case .evaluating(let generation): return "evaluating generation \(generation)"
            case .held: return "held"
            }
        }
    }

    /// The held credential and what is known of it.
    struct Held: Sendable {
        let value: HeldCredential
        let generation: UInt64
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
        /// `refreshIfNeeded` callers waiting beside the line for this refresh (ahead) to end.
        var probes: [Waiter] = []
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

    /// The refresh in flight, if any, and the attempts given up at the abandon limit whose
    /// result may still arrive (the last few).
    struct Refreshes: Sendable {
        var running: Attempt?
        private(set) var abandoned: [Attempt] = []

        /// Gives up the running attempt; returns it with the probes that waited for it, which
        /// the abandoned attempt no longer keeps.
        mutating func abandonRunning() -> Attempt? {
            guard var attempt = running else { return nil }
            running = nil
            let given = attempt
            attempt.probes = []
            abandoned.append(attempt)
            if abandoned.count > 8 { abandoned.removeFirst() }
            return given
        }

        /// Takes the attempt `id`, running or abandoned: `onTime` when it was running.
        mutating func take(_ id: UInt64) -> (attempt: Attempt, onTime: Bool)? {
            if let attempt = running, attempt.id == id {
                running = nil
                return (attempt, true)
            }
            guard let index = abandoned.firstIndex(where: { $0.id == id }) else { return nil }
            return (abandoned.remove(at: index), false)
        }
    }

    /// The numbers that tell things apart. Each only grows (wrapping, after 2⁶⁴ steps).
    struct Identifiers: Sendable {
        /// Bumped by `invalidate()` and `adopt(_:)`: what started in an older epoch is stale.
        var epoch: UInt64 = 0
        /// The generation of the credential held last: each one found, refreshed or adopted.
        var generation: UInt64 = 0
        /// The last refresh attempt started, and the last whose result was adopted (or that an
        /// `adopt(_:)` outdated).
        var attempt: UInt64 = 0
        var lastAdoptedAttempt: UInt64 = 0
        /// The ticket the next waiter gets.
        var nextTicket: UInt64 = 0

        mutating func newTicket() -> UInt64 {
            defer { nextTicket &+= 1 }
            return nextTicket
        }

        mutating func newGeneration() -> UInt64 {
            generation &+= 1
            return generation
        }

        mutating func newAttempt() -> UInt64 {
            attempt &+= 1
            return attempt
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
            probes: refreshes.running?.probes.count ?? 0, isHeld: linePhase.isHeld, isMoving: linePhase.isMoving,
            pumpPending: handOut.pumpPending, unanswered: handOut.unanswered, delivering: handOut.delivery.isBusy,
            deferred: handOut.delivery.deferred.reduce(0) { $0 + $1.waiters.count },
            refreshAttempt: refreshes.running?.id, refreshGeneration: refreshes.running?.generation,
            earliestWaitDeadline: earliestWaitDeadline, armedWaitTimer: timerDeadline)
    }
}
