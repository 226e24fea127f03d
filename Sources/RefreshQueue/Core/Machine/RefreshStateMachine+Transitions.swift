import Foundation

// The steps the events are made of. Called only by the machine's own events.
extension RefreshStateMachine {
    // MARK: - Transitions

    /// The front of the line needs a refresh of the held credential: join the one running, or
    /// start one, or fail the line at once when no refresh may start.
    mutating func needRefresh(now: TimeInterval, into actions: inout Actions) {
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
            // Once per episode: a loop refused is one thing to report, however many requests it fails.
            if !refusingRefreshes {
                refusingRefreshes = true
                actions.events.append(.refreshRefused(.excessiveRefresh))
            }
            answer(line.removeAll(), .fail(.excessiveRefresh), into: &actions)
            return
        }
        refusingRefreshes = false
        start(held, ahead: false, now: now, into: &actions)
        actions.events.append(.refreshStarted(generation: held.generation))
        beginHold(now: now, into: &actions)
    }

    /// Starts a refresh ahead of the held credential, if one may start.
    mutating func startAhead(now: TimeInterval, into actions: inout Actions) {
        guard refresh == nil, let held = credential, !held.knownStale, !held.aheadGivenUp,
            now >= held.aheadNotBefore
        else { return }
        if let backoff = retryAfter, now < backoff.until { return }
        // Leave the window room for the refresh that expiry will need.
        guard admit(ahead: true, now: now) else { return }
        start(held, ahead: true, now: now, into: &actions)
        actions.events.append(.refreshAheadStarted(generation: held.generation))
    }

    mutating func start(_ held: Held, ahead: Bool, now: TimeInterval, into actions: inout Actions) {
        attempts &+= 1
        let attempt = Attempt(
            id: attempts, generation: held.generation, epoch: epoch, startedAt: now, ahead: ahead,
            refreshedHeader: held.value.signingHeader)
        refresh = attempt
        actions.refresh = StartRefresh(attempt: attempt.id, credential: held.value, ahead: ahead)
        actions.abandonTimer = AbandonTimer(attempt: attempt.id, at: now + configuration.abandonAfter)
    }

    /// Whether a refresh may start: the window holds fewer signs of a loop (see
    /// ``countAgainstWindow(now:)``) than it allows. A refresh ahead leaves one place free, for
    /// the refresh that expiry will need.
    mutating func admit(ahead: Bool, now: TimeInterval) -> Bool {
        let window = configuration.window
        recentRefreshes.removeAll { now - $0.startedAt >= window.interval }
        // The window has room again: a later refusal starts a new episode, reported anew.
        if recentRefreshes.count < window.maximumRefreshes { refusingRefreshes = false }
        let limit = ahead ? window.maximumRefreshes - 1 : window.maximumRefreshes
        return recentRefreshes.count < limit
    }

    /// Counts a refresh that a loop caused against the window: one whose result already needed a
    /// refresh, one whose result the server rejected, or one the server refused (a failure that
    /// is not the network's). Refreshes that tokens' lifetimes call for, ahead or at expiry, are
    /// not counted: short-lived tokens must never lock the app out.
    mutating func countAgainstWindow(now: TimeInterval) {
        recentRefreshes.append(StartedRefresh(startedAt: now))
    }

    /// After a failed refresh ahead: the next one waits, longer after each failure; after a
    /// failure that needs a new login, none is tried for this generation.
    mutating func backOffAhead(requiresReauthentication: Bool, now: TimeInterval) {
        guard var held = credential else { return }
        held.aheadFailures += 1
        held.aheadNotBefore = now + min(60, pow(2, Double(min(held.aheadFailures - 1, 6))))
        if requiresReauthentication { held.aheadGivenUp = true }
        credential = held
    }

    mutating func beginHold(now: TimeInterval, into actions: inout Actions) {
        if linePhase != .held {
            linePhase = .held
            actions.queue = .suspend
            hold = HoldRecord(startedAt: line.first?.arrivedAt ?? now, requests: line.count)
        }
        armWaitTimer(into: &actions)
    }

    mutating func releaseHold(now: TimeInterval, into actions: inout Actions) {
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
    mutating func approveLine(_ outcome: Outcome, into actions: inout Actions) {
        guard let last = line.lastTicket else { return }
        dropApproval(into: &actions)
        approval = Approval(throughTicket: last, outcome: outcome)
    }

    /// Forgets the approval. Its outcome may hold the last reference to the app's error (or a
    /// credential): it is released with the actions, after the lock, since its `deinit` is user
    /// code.
    mutating func dropApproval(into actions: inout Actions) {
        if let old = approval { actions.displaced.append(old) }
        approval = nil
    }

    mutating func forgetCredential(into actions: inout Actions) {
        if let old = credential { actions.displaced.append(old.value) }
        credential = nil
    }

    mutating func takeProbes() -> [Waiter] {
        defer { probes = [] }
        return probes
    }

    /// Settles the probes of a refresh whose result no longer says anything about what is held
    /// (an `invalidate()` or `adopt(_:)` meanwhile, a late result adopted, a store holding another
    /// session, a refresh given up) by moving them into the line, in arrival order and with their
    /// arrival times: the line decides with what is held now, as for a request. A fresh token
    /// answers them, one that needs a refresh makes them wait for it, one that recommends a
    /// refresh lets them wait beside the line for the refresh ahead, and nothing held asks `find()`.
    mutating func settleProbesAfresh(_ probes: [Waiter], into actions: inout Actions) {
        guard !probes.isEmpty else { return }
        for probe in probes { line.insert(probe) }
        switch linePhase {
        case .held:
            hold?.requests += probes.count
            armWaitTimer(into: &actions)
        case .loading, .evaluating:
            armWaitTimer(into: &actions)
        case .moving:
            if !pumpPending { schedulePump(into: &actions) }
        }
    }

    mutating func schedulePump(into actions: inout Actions) {
        pumpPending = true
        actions.schedulePump = true
    }

    /// Hands `waiters` to the driver; one event answers at most one group. Groups are delivered
    /// one at a time, in the order they were handed out: while one is being delivered, the next
    /// waits here for its deliverer (see ``delivered()``).
    mutating func answer(_ waiters: [Waiter], _ outcome: Outcome, into actions: inout Actions) {
        guard !waiters.isEmpty else { return }
        assert(actions.answers == nil, "one event answers one group of waiters")
        unanswered += waiters.count
        actions.answers = delivery.handOut(Answers(waiters: waiters, outcome: outcome))
    }

    /// Arms a wait timer for the earliest deadline still to come, unless one is armed for it.
    mutating func armWaitTimer(into actions: inout Actions) {
        guard let deadline = earliestWaitDeadline else { return }
        if let armed = timerDeadline, armed <= deadline { return }
        timerDeadline = deadline
        actions.waitTimer = deadline
    }

    func displace(_ result: RefreshResult, into actions: inout Actions) {
        if case .refreshed(let value, _) = result { actions.displaced.append(value) }
    }
}
