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
///   past it.
/// - The queue is suspended exactly while the line is held by a refresh.
/// - A refresh's result is adopted only in the epoch it started in (``invalidate(now:)`` and
///   ``adopt(_:now:)`` start a new one) and only if no later attempt's result was adopted; a
///   failure forgets only the generation it refreshed.
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

    /// The authentication that signs, if one is held.
    private var credential: Held?
    /// The waiting requests, in arrival order.
    private var line = WaitLine()
    /// What the line is waiting for.
    private var linePhase: LinePhase = .moving
    /// The refresh in flight, if any.
    private var refresh: Attempt?
    /// Attempts given up at the abandon limit whose result may still arrive.
    private var abandoned: [Attempt] = []
    /// `refreshIfNeeded` callers waiting for the refresh ahead in flight.
    private var probes: [Waiter] = []
    /// Waiters in the line up to this ticket are answered this way, without another look.
    private var approval: Approval?
    private var epoch: UInt64 = 0
    private var generations: UInt64 = 0
    private var attempts: UInt64 = 0
    private var lastAdoptedAttempt: UInt64 = 0
    private var nextTicket: UInt64 = 0
    /// A pump is enqueued or running; it asks for the next step until told `idle`.
    private var pumpPending = false
    /// Waiters handed out for answering and not yet reported answered.
    private var unanswered = 0
    /// The earliest wait timer armed and not yet fired.
    private var timerDeadline: TimeInterval?
    /// Refreshes counted against the refresh window.
    private var recentRefreshes: [StartedRefresh] = []
    /// No refresh before `until`: the server asked for a pause (`Retry-After`).
    private var retryAfter: Backoff?
    /// When the current hold began and how many requests it held.
    private var hold: HoldRecord?

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

    /// Whether the serial queue is suspended now.
    var isQueueSuspended: Bool { linePhase == .held }

    // MARK: - Requests

    /// A request (or a probe) starts waiting.
    ///
    /// - Parameters:
    ///   - makeTask: Creates the request's task for its ticket.
    ///   - rejectedHeader: For a request the server rejected: the header value it carried.
    ///   - staleGeneration: The fast path read that this generation needs a refresh.
    mutating func arrive(
        _ makeTask: (UInt64) -> AuthorizationTask,
        kind: Waiter.Kind = .request,
        rejectedHeader: String? = nil,
        staleGeneration: UInt64? = nil,
        now: TimeInterval
    ) -> (AuthorizationTask, Actions) {
        let ticket = nextTicket
        nextTicket &+= 1
        var rejectedGeneration: UInt64?
        if let rejectedHeader, let held = credential, case .success(rejectedHeader) = held.value.header {
            rejectedGeneration = held.generation
            credential?.knownStale = true
        }
        if let staleGeneration, credential?.generation == staleGeneration {
            credential?.knownStale = true
        }
        let task = makeTask(ticket)
        line.append(
            Waiter(task: task, ticket: ticket, arrivedAt: now, rejectedGeneration: rejectedGeneration, kind: kind))
        var actions = Actions()
        actions.events.append(.requestWaiting(waiting: line.count))
        switch linePhase {
        case .held:
            hold?.requests += 1
            armWaitTimer(into: &actions)
        case .loading:
            armWaitTimer(into: &actions)
        case .evaluating:
            break
        case .moving:
            if pumpPending { break }
            if let credential, credential.knownStale, line.count == 1 {
                needRefresh(now: now, into: &actions)
            } else {
                schedulePump(into: &actions)
            }
        }
        return (task, actions)
    }

    /// The fast path read that the held credential recommends a refresh ahead.
    mutating func refreshRecommended(generation: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard credential?.generation == generation else { return actions }
        startAhead(now: now, into: &actions)
        return actions
    }

    /// A waiting request was cancelled (and completed by its canceller).
    mutating func cancel(ticket: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        if let waiter = line.remove(ticket: ticket) {
            actions.displaced.append(waiter.task)
            if line.isEmpty, linePhase == .held {
                releaseHold(now: now, into: &actions)
            }
        } else if let index = probes.firstIndex(where: { $0.ticket == ticket }) {
            actions.displaced.append(probes.remove(at: index).task)
        }
        return actions
    }

    /// Answers handed out earlier have been delivered.
    mutating func answered(_ count: Int) {
        unanswered -= count
    }

    // MARK: - The pump

    /// The pump's next step, on the serial queue.
    mutating func pump(now: TimeInterval) -> PumpStep {
        var actions = Actions()
        guard linePhase == .moving, let head = line.first else {
            pumpPending = false
            return .idle(actions)
        }
        if let approval, head.ticket <= approval.throughTicket {
            self.approval = nil
            answer(line.removeFirst(while: { $0.ticket <= approval.throughTicket }), approval.outcome, into: &actions)
            return .perform(actions)
        }
        approval = nil
        guard let credential else {
            linePhase = .loading(epoch: epoch)
            armWaitTimer(into: &actions)
            return .find(actions)
        }
        if credential.knownStale || head.rejectedGeneration == credential.generation {
            needRefresh(now: now, into: &actions)
            return .perform(actions)
        }
        linePhase = .evaluating(generation: credential.generation)
        return .evaluate(credential.value, generation: credential.generation)
    }

    /// `find()` returned what it found.
    mutating func found(_ found: HeldCredential?, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard case .loading(let loadingEpoch) = linePhase else {
            if let found { actions.displaced.append(found) }
            return actions
        }
        linePhase = .moving
        actions.events.append(.authenticationLoaded(found: found != nil))
        guard loadingEpoch == epoch, credential == nil else {
            // A logout or a login happened while `find()` ran: what it found may be stale.
            if let found { actions.displaced.append(found) }
            return actions
        }
        if let found {
            generations &+= 1
            credential = Held(value: found, generation: generations, epoch: epoch)
        } else if let first = line.removeFirst() {
            // `find()` is asked again for the next waiter: a login saved meanwhile is seen.
            answer([first], .missing, into: &actions)
        }
        return actions
    }

    /// The pump read the freshness of `generation`.
    mutating func evaluated(generation: UInt64, freshness: Freshness, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard case .evaluating(let evaluating) = linePhase, evaluating == generation else { return actions }
        linePhase = .moving
        guard let held = credential, held.generation == generation, !held.knownStale else { return actions }
        switch freshness {
        case .needed:
            credential?.knownStale = true
            needRefresh(now: now, into: &actions)
        case .fresh, .recommended:
            let waiters = line.removeFirst(while: { $0.rejectedGeneration != generation })
            var signed = waiters
            if freshness == .recommended {
                startAhead(now: now, into: &actions)
                if refresh?.generation == generation, refresh?.epoch == epoch {
                    // `refreshIfNeeded` waits for the refresh ahead; requests do not.
                    signed = waiters.filter { $0.kind == .request }
                    probes += waiters.filter { $0.kind == .probe }
                    armWaitTimer(into: &actions)
                }
            }
            answer(signed, .sign(held.value), into: &actions)
        }
        return actions
    }

    // MARK: - Refreshes

    /// A refresh reported its end.
    mutating func refreshEnded(attempt id: UInt64, _ result: RefreshResult, now: TimeInterval) -> Actions {
        var actions = Actions()
        let attempt: Attempt
        let onTime: Bool
        if let running = refresh, running.id == id {
            attempt = running
            refresh = nil
            onTime = true
        } else if let index = abandoned.firstIndex(where: { $0.id == id }) {
            attempt = abandoned.remove(at: index)
            onTime = false
        } else {
            displace(result, into: &actions)
            return actions
        }
        let duration = now - attempt.startedAt
        // The line waits for whatever refresh is running; this one ending frees it.
        let lineWasHeld = onTime && linePhase == .held
        let waiting = line.count
        let probes = onTime ? takeProbes() : []
        switch result {
        case .refreshed(let value, let freshness):
            guard attempt.epoch == epoch, id > lastAdoptedAttempt else {
                // Invalidated, or a newer attempt's result is held: keep what is held now.
                actions.displaced.append(value)
                answer(probes, credential.map { .sign($0.value) } ?? .fail(.notAuthenticated), into: &actions)
                if lineWasHeld { releaseHold(now: now, into: &actions) }
                return actions
            }
            lastAdoptedAttempt = id
            generations &+= 1
            if let old = credential { actions.displaced.append(old.value) }
            credential = Held(value: value, generation: generations, epoch: epoch)
            approval = nil
            if freshness == .needed {
                // Stale on arrival: waiters fail rather than refresh again (no refresh storm).
                credential?.knownStale = true
                actions.events.append(.refreshFailed(.excessiveRefresh, duration: duration))
                answer(probes, .fail(.excessiveRefresh), into: &actions)
                if lineWasHeld { approveLine(.fail(.excessiveRefresh)) }
            } else {
                let late = !onTime || (attempt.waitersTimedOut && !lineWasHeld)
                actions.events.append(
                    late ? .lateRefreshAdopted(duration: duration) : .refreshSucceeded(duration: duration))
                answer(probes, .sign(value), into: &actions)
                // Whoever waits, for this refresh or another still running, can use it now.
                if linePhase == .held { approveLine(.sign(value)) }
            }
            if linePhase == .held {
                if lineWasHeld { actions.events.append(.requestsResumed(waiting: waiting)) }
                releaseHold(now: now, into: &actions)
            }
        case .failed(let failure):
            if failure.isTransport {
                recentRefreshes.removeAll { $0.id == id }
            }
            if let delay = failure.retryAfter, delay > 0 {
                if let old = retryAfter { actions.displaced.append(old.error) }
                retryAfter = Backoff(until: now + delay, error: .refreshFailed(failure.error))
            }
            let current = attempt.epoch == epoch && credential?.generation == attempt.generation
            answer(probes, .fail(.refreshFailed(failure.error)), into: &actions)
            if lineWasHeld {
                actions.events.append(.refreshFailed(.refreshFailed(failure.error), duration: duration))
                if current {
                    approveLine(.fail(.refreshFailed(failure.error)))
                    if failure.requiresReauthentication { forgetCredential(into: &actions) }
                }
                actions.events.append(.requestsResumed(waiting: waiting))
                releaseHold(now: now, into: &actions)
            } else if attempt.ahead && onTime {
                // Nobody waited: the current token stays in use; try again later.
                if current { backOffAhead(requiresReauthentication: failure.requiresReauthentication, now: now) }
                actions.events.append(
                    .refreshAheadFailed(.refreshFailed(failure.error), duration: duration))
            } else {
                actions.events.append(.refreshFailed(.refreshFailed(failure.error), duration: duration))
                if current, failure.requiresReauthentication, refresh == nil {
                    forgetCredential(into: &actions)
                }
            }
        case .superseded:
            answer(probes, .fail(.notAuthenticated), into: &actions)
            if attempt.epoch == epoch, credential?.generation == attempt.generation {
                forgetCredential(into: &actions)
            }
            if lineWasHeld { releaseHold(now: now, into: &actions) }
        }
        return actions
    }

    /// The refresh `id` has run for `abandonAfter`: give it up.
    mutating func abandonLimitReached(attempt id: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard let running = refresh, running.id == id else { return actions }
        refresh = nil
        abandoned.append(running)
        if abandoned.count > 8 { abandoned.removeFirst() }
        actions.events.append(.refreshAbandoned(after: now - running.startedAt))
        answer(takeProbes(), .fail(.refreshTimedOut), into: &actions)
        if linePhase == .held {
            // Waiters decide again: a new refresh of the same token may start now.
            releaseHold(now: now, into: &actions)
        }
        return actions
    }

    /// The wait timer armed for `deadline` fired: fail the waiters whose `refreshTimeout` has
    /// passed, and arm the timer again for the next one.
    mutating func timerFired(deadline: TimeInterval, now: TimeInterval) -> Actions {
        var actions = Actions()
        if timerDeadline == deadline { timerDeadline = nil }
        let timeout = configuration.refreshTimeout
        var expired: [Waiter] = []
        switch linePhase {
        case .held, .loading:
            expired = line.removeFirst(while: { $0.arrivedAt + timeout <= now })
        case .moving, .evaluating:
            break
        }
        let expiredProbes = probes.prefix(while: { $0.arrivedAt + timeout <= now })
        probes.removeFirst(expiredProbes.count)
        if !expired.isEmpty || !expiredProbes.isEmpty {
            refresh?.waitersTimedOut = true
            let waited = refresh.map { now - $0.startedAt } ?? timeout
            actions.events.append(.refreshTimedOut(after: waited))
            var all = expired + expiredProbes
            if !expiredProbes.isEmpty { all.sort { $0.ticket < $1.ticket } }
            answer(all, .fail(.refreshTimedOut), into: &actions)
        }
        if linePhase == .held, line.isEmpty {
            releaseHold(now: now, into: &actions)
        }
        armWaitTimer(into: &actions)
        return actions
    }

    // MARK: - The app

    /// `invalidate()`: forget what is held; nothing found or refreshed before is kept.
    mutating func invalidate(now: TimeInterval) -> Actions {
        var actions = Actions()
        epoch &+= 1
        approval = nil
        if let old = credential { actions.displaced.append(old.value) }
        credential = nil
        return actions
    }

    /// `adopt(_:)`: hold `value` from now on, in a new epoch; waiting requests use it.
    mutating func adopt(_ value: HeldCredential, now: TimeInterval) -> Actions {
        var actions = Actions()
        epoch &+= 1
        generations &+= 1
        lastAdoptedAttempt = attempts
        approval = nil
        if let old = credential { actions.displaced.append(old.value) }
        credential = Held(value: value, generation: generations, epoch: epoch)
        answer(takeProbes(), .sign(value), into: &actions)
        releaseHold(now: now, into: &actions)
        return actions
    }

    // MARK: - Transitions

    /// The front of the line needs a refresh of the held credential: join the one running, or
    /// start one, or fail the line at once when no refresh may start.
    private mutating func needRefresh(now: TimeInterval, into actions: inout Actions) {
        // Everyone in line may have been cancelled meanwhile: the next request decides then.
        guard let held = credential, !line.isEmpty else { return }
        if refresh != nil {
            beginHold(now: now, into: &actions)
            return
        }
        if let backoff = retryAfter, now < backoff.until {
            answer(line.removeAll(), .fail(backoff.error), into: &actions)
            return
        }
        guard admit(ahead: false, now: now) else {
            actions.events.append(.refreshRefused(.excessiveRefresh))
            answer(line.removeAll(), .fail(.excessiveRefresh), into: &actions)
            return
        }
        start(held, ahead: false, now: now, into: &actions)
        actions.events.append(.refreshStarted(generation: held.generation))
        beginHold(now: now, into: &actions)
    }

    /// Starts a refresh ahead of the held credential, if one may start.
    private mutating func startAhead(now: TimeInterval, into actions: inout Actions) {
        guard refresh == nil, let held = credential, !held.knownStale, !held.aheadGivenUp,
            now >= held.aheadNotBefore
        else { return }
        if let backoff = retryAfter, now < backoff.until { return }
        // Leave the window room for the refresh that expiry will need.
        guard admit(ahead: true, now: now) else { return }
        start(held, ahead: true, now: now, into: &actions)
        actions.events.append(.refreshAheadStarted(generation: held.generation))
    }

    private mutating func start(_ held: Held, ahead: Bool, now: TimeInterval, into actions: inout Actions) {
        attempts &+= 1
        let attempt = Attempt(
            id: attempts, generation: held.generation, epoch: epoch, startedAt: now, ahead: ahead)
        refresh = attempt
        actions.refresh = StartRefresh(attempt: attempt.id, credential: held.value, ahead: ahead)
        actions.abandonTimer = AbandonTimer(attempt: attempt.id, at: now + configuration.abandonAfter)
    }

    /// Records a refresh in the window, or says it may not start. A refresh ahead leaves one
    /// place free.
    private mutating func admit(ahead: Bool, now: TimeInterval) -> Bool {
        let window = configuration.window
        recentRefreshes.removeAll { now - $0.startedAt >= window.interval }
        let limit = ahead ? window.maximumRefreshes - 1 : window.maximumRefreshes
        guard recentRefreshes.count < limit else { return false }
        recentRefreshes.append(StartedRefresh(id: attempts &+ 1, startedAt: now))
        return true
    }

    /// After a failed refresh ahead: the next one waits, longer after each failure; after a
    /// failure that needs a new login, none is tried for this generation.
    private mutating func backOffAhead(requiresReauthentication: Bool, now: TimeInterval) {
        guard var held = credential else { return }
        held.aheadFailures += 1
        held.aheadNotBefore = now + min(60, pow(2, Double(min(held.aheadFailures - 1, 6))))
        if requiresReauthentication { held.aheadGivenUp = true }
        credential = held
    }

    private mutating func beginHold(now: TimeInterval, into actions: inout Actions) {
        if linePhase != .held {
            linePhase = .held
            actions.queue = .suspend
            hold = HoldRecord(startedAt: line.first?.arrivedAt ?? now, requests: line.count)
        }
        armWaitTimer(into: &actions)
    }

    private mutating func releaseHold(now: TimeInterval, into actions: inout Actions) {
        guard linePhase == .held else { return }
        linePhase = .moving
        actions.queue = actions.queue == .suspend ? .none : .resume
        if let hold {
            actions.events.append(.refreshHeldRequests(count: hold.requests, duration: now - hold.startedAt))
            self.hold = nil
        }
        if !line.isEmpty, !pumpPending {
            schedulePump(into: &actions)
        }
    }

    /// Every waiter now in the line is answered with `outcome` when the pump reaches it.
    private mutating func approveLine(_ outcome: Outcome) {
        guard let last = line.lastTicket else { return }
        approval = Approval(throughTicket: last, outcome: outcome)
    }

    private mutating func forgetCredential(into actions: inout Actions) {
        if let old = credential { actions.displaced.append(old.value) }
        credential = nil
    }

    private mutating func takeProbes() -> [Waiter] {
        defer { probes = [] }
        return probes
    }

    private mutating func schedulePump(into actions: inout Actions) {
        pumpPending = true
        actions.schedulePump = true
    }

    /// Hands `waiters` to the driver; one event answers at most one group.
    private mutating func answer(_ waiters: [Waiter], _ outcome: Outcome, into actions: inout Actions) {
        guard !waiters.isEmpty else { return }
        assert(actions.answers == nil, "one event answers one group of waiters")
        unanswered += waiters.count
        actions.answers = Answers(waiters: waiters, outcome: outcome)
    }

    /// Arms a wait timer for the earliest deadline still to come, unless one is armed for it.
    private mutating func armWaitTimer(into actions: inout Actions) {
        var earliest: TimeInterval?
        switch linePhase {
        case .held, .loading:
            earliest = line.first?.arrivedAt
        case .moving, .evaluating:
            break
        }
        if let probe = probes.first?.arrivedAt {
            earliest = min(earliest ?? probe, probe)
        }
        guard let arrivedAt = earliest else { return }
        let deadline = arrivedAt + configuration.refreshTimeout
        if let armed = timerDeadline, armed <= deadline { return }
        timerDeadline = deadline
        actions.waitTimer = deadline
    }

    private func displace(_ result: RefreshResult, into actions: inout Actions) {
        if case .refreshed(let value, _) = result { actions.displaced.append(value) }
    }
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
    }

    struct Attempt: Sendable {
        let id: UInt64
        let generation: UInt64
        let epoch: UInt64
        let startedAt: TimeInterval
        let ahead: Bool
        /// Some of its waiters timed out: a success is adopted late.
        var waitersTimedOut = false
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
private struct StartedRefresh: Sendable {
    let id: UInt64
    let startedAt: TimeInterval
}

/// A `Retry-After` in force: until `until`, refreshes fail with `error`.
private struct Backoff: Sendable {
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
        /// The running refresh: its attempt and the generation it refreshes.
        let refreshAttempt: UInt64?
        let refreshGeneration: UInt64?
        /// The earliest moment a waiter must be answered by a timer, if any waits for one.
        let earliestWaitDeadline: TimeInterval?
        /// The wait timer the machine believes is armed.
        let armedWaitTimer: TimeInterval?
    }

    var snapshot: Snapshot {
        var line = self.line
        var earliest: TimeInterval?
        switch linePhase {
        case .held, .loading:
            earliest = line.first?.arrivedAt
        case .moving, .evaluating:
            break
        }
        if let probe = probes.first?.arrivedAt { earliest = min(earliest ?? probe, probe) }
        return Snapshot(
            credential: credential?.value, generation: credential?.generation, waiting: line.count,
            probes: probes.count, isHeld: linePhase == .held, isMoving: linePhase == .moving,
            pumpPending: pumpPending, unanswered: unanswered, refreshAttempt: refresh?.id,
            refreshGeneration: refresh?.generation,
            earliestWaitDeadline: earliest.map { $0 + configuration.refreshTimeout }, armedWaitTimer: timerDeadline)
    }
}
