import Foundation

// The steps the events are made of. Called only by the machine's own events.
extension RefreshStateMachine {
    // MARK: - Transitions

    /// The front of the line needs a refresh of the held credential: join the one running, or
    /// start one, or fail the line at once when no refresh may start.
    mutating func needRefresh(now: TimeInterval, into actions: inout Actions) {
        // Everyone in line may have been cancelled meanwhile: the next request decides then.
        guard let held = credential, !line.isEmpty else { return }
        if refreshes.running != nil {
            beginHold(now: now, into: &actions)
            return
        }
        if let backoff = admission.pause(at: now) {
            answer(line.removeAll(), .fail(backoff.error), into: &actions)
            return
        }
        guard admission.admits(ahead: false, now: now, window: configuration.window) else {
            // Once per episode: a loop refused is one thing to report, however many requests it fails.
            if admission.refuse() {
                actions.events.append(.refreshRefused(.excessiveRefresh))
            }
            answer(line.removeAll(), .fail(.excessiveRefresh), into: &actions)
            return
        }
        admission.started()
        start(held, ahead: false, now: now, into: &actions)
        actions.events.append(.refreshStarted(generation: held.generation))
        beginHold(now: now, into: &actions)
    }

    /// Starts a refresh ahead of the held credential, if one may start.
    mutating func startAhead(now: TimeInterval, into actions: inout Actions) {
        guard refreshes.running == nil, let held = credential, !held.knownStale, !held.aheadGivenUp,
            now >= held.aheadNotBefore
        else { return }
        if admission.pause(at: now) != nil { return }
        // Leave the window room for the refresh that expiry will need.
        guard admission.admits(ahead: true, now: now, window: configuration.window) else { return }
        start(held, ahead: true, now: now, into: &actions)
        actions.events.append(.refreshAheadStarted(generation: held.generation))
    }

    mutating func start(_ held: Held, ahead: Bool, now: TimeInterval, into actions: inout Actions) {
        let attempt = Attempt(
            id: ids.newAttempt(), generation: held.generation, epoch: ids.epoch, startedAt: now, ahead: ahead,
            refreshedHeader: held.value.signingHeader)
        refreshes.running = attempt
        actions.refresh = StartRefresh(
            attempt: attempt.id, credential: held.value, abandonAt: now + configuration.abandonAfter)
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
        if !linePhase.isHeld {
            dropApproval(into: &actions)
            linePhase = .held(HoldRecord(startedAt: line.first?.arrivedAt ?? now, requests: line.count))
            actions.queue = .suspend
        }
        armWaitTimer(into: &actions)
    }

    /// `count` more waiters wait in the held line.
    mutating func addToHold(_ count: Int) {
        guard case .held(var record) = linePhase else { return }
        record.requests += count
        linePhase = .held(record)
    }

    /// The line moves again, if a refresh held it; every waiter now in it is answered with
    /// `approving`, when given, as the pump reaches it.
    mutating func releaseHold(now: TimeInterval, approving: Outcome? = nil, into actions: inout Actions) {
        guard case .held(let record) = linePhase else { return }
        let approval = approving.flatMap { outcome in
            line.lastTicket.map { Approval(throughTicket: $0, outcome: outcome) }
        }
        linePhase = .moving(approval: approval)
        actions.queue = actions.queue == .suspend ? .none : .resume
        actions.events.append(.refreshHeldRequests(count: record.requests, duration: now - record.startedAt))
        if !line.isEmpty, !handOut.pumpPending {
            schedulePump(into: &actions)
        }
    }

    /// Forgets the approval of a moving line. Its outcome may hold the last reference to the
    /// app's error (or a credential): it is released with the actions, after the lock, since its
    /// `deinit` is user code.
    mutating func dropApproval(into actions: inout Actions) {
        guard case .moving(let approval?) = linePhase else { return }
        actions.displaced.append(approval)
        linePhase = .moving(approval: nil)
    }

    mutating func forgetCredential(into actions: inout Actions) {
        if let old = credential { actions.displaced.append(old.value) }
        credential = nil
    }

    /// The probes waiting for the running refresh, which no longer keeps them.
    mutating func takeProbes() -> [Waiter] {
        defer { refreshes.running?.probes = [] }
        return refreshes.running?.probes ?? []
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
            addToHold(probes.count)
            armWaitTimer(into: &actions)
        case .loading, .evaluating:
            armWaitTimer(into: &actions)
        case .moving:
            if !handOut.pumpPending { schedulePump(into: &actions) }
        }
    }

    mutating func schedulePump(into actions: inout Actions) {
        handOut.pumpPending = true
        actions.schedulePump = true
    }

    /// Hands `waiters` to the driver; one event answers at most one group. Groups are delivered
    /// one at a time, in the order they were handed out: while one is being delivered, the next
    /// waits here for its deliverer (see ``delivered()``).
    mutating func answer(_ waiters: [Waiter], _ outcome: Outcome, into actions: inout Actions) {
        guard !waiters.isEmpty else { return }
        assert(actions.answers == nil, "one event answers one group of waiters")
        handOut.unanswered += waiters.count
        actions.answers = handOut.delivery.handOut(Answers(waiters: waiters, outcome: outcome))
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
