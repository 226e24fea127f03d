import Foundation

// Events of refreshes, timers and the app: a refresh ends or is abandoned, a wait times out,
// the app logs out or in.
extension RefreshStateMachine {
    // MARK: - Refreshes

    /// A refresh reported its end.
    mutating func refreshEnded(attempt id: UInt64, _ result: RefreshResult, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard let (attempt, onTime) = refreshes.take(id) else {
            displace(result, into: &actions)
            return actions
        }
        let duration = now - attempt.startedAt
        // The line waits for whatever refresh is running; this one ending frees it.
        let lineWasHeld = onTime && linePhase.isHeld
        let waiting = line.count
        let probes = onTime ? attempt.probes : []
        switch result {
        case .refreshed(let value, let freshness):
            guard attempt.epoch == ids.epoch, id > ids.lastAdoptedAttempt else {
                // Invalidated, or a newer attempt's result is held: keep what is held now.
                actions.displaced.append(value)
                // Unless `find()`, asked after an `invalidate()` while this refresh still ran, gave
                // the very authentication it refreshed: that copy is spent now (the server may have
                // rotated its refresh token), and `find()` is asked again, for what the refresh
                // persisted or what was stored since.
                if id > ids.lastAdoptedAttempt, let refreshed = attempt.refreshedHeader {
                    if credential?.value.signingHeader == refreshed {
                        forgetCredential(into: &actions)
                    } else if case .loading(let loadingEpoch, let spent) = linePhase, credential == nil {
                        // The copy may be what the `find()` running now reads.
                        linePhase = .loading(epoch: loadingEpoch, spent: spent + [refreshed])
                    }
                }
                if lineWasHeld { releaseHold(now: now, into: &actions) }
                settleProbesAfresh(probes, into: &actions)
                return actions
            }
            ids.lastAdoptedAttempt = id
            let aheadFailures = credential?.aheadFailures ?? 0
            if let old = credential { actions.displaced.append(old.value) }
            credential = Held(value: value, generation: ids.newGeneration())
            credential?.issuedByRefresh = true
            if freshness == .recommended {
                // Recommends a refresh on arrival (a leeway as long as the lifetime, a clock off):
                // refreshing ahead again at once would loop, so the next one waits, longer each time.
                credential?.aheadFailures = aheadFailures
                backOffAhead(requiresReauthentication: false, now: now)
            }
            dropApproval(into: &actions)
            var approving: Outcome?
            if freshness == .needed {
                // Stale on arrival: waiters fail rather than refresh again (no refresh storm), and
                // the window counts it.
                credential?.knownStale = true
                admission.count(now: now)
                actions.events.append(.refreshFailed(.excessiveRefresh, duration: duration))
                answer(probes, .fail(.excessiveRefresh), into: &actions)
                if lineWasHeld { approving = .fail(.excessiveRefresh) }
            } else {
                let late = !onTime || (attempt.waitersTimedOut && !lineWasHeld)
                actions.events.append(
                    late ? .lateRefreshAdopted(duration: duration) : .refreshSucceeded(duration: duration))
                answer(probes, .sign(value), into: &actions)
                // Whoever waits, for this refresh or another still running, can use it now.
                if linePhase.isHeld { approving = .sign(value) }
            }
            if linePhase.isHeld {
                if lineWasHeld { actions.events.append(.requestsResumed(waiting: waiting)) }
                releaseHold(now: now, approving: approving, into: &actions)
            }
            // A late result replaced the token that the refresh running now refreshes: whoever
            // waits beside the line for that one asks the line about this token instead.
            if !onTime { settleProbesAfresh(takeProbes(), into: &actions) }
        case .failed(let failure):
            let error = failure.answer
            // Refused by the server: trying again at once is a loop. An offline device retrying is
            // not, nor is a refresh given up or of a login replaced meanwhile, which nobody retries.
            if !failure.isTransport, onTime, attempt.epoch == ids.epoch { admission.count(now: now) }
            if let delay = failure.retryAfter, delay > 0,
                let old = admission.pause(for: delay, failingWith: error, now: now)
            {
                actions.displaced.append(old.error)
            }
            let current = attempt.epoch == ids.epoch && credential?.generation == attempt.generation
            // After an `invalidate()` or `adopt(_:)`, or a late result adopted, what this refresh
            // met says nothing about what is held now: its probes ask the line again.
            if current {
                answer(probes, .fail(error), into: &actions)
            } else {
                settleProbesAfresh(probes, into: &actions)
            }
            if lineWasHeld {
                actions.events.append(.refreshFailed(error, duration: duration))
                if current, failure.requiresReauthentication { forgetCredential(into: &actions) }
                actions.events.append(.requestsResumed(waiting: waiting))
                releaseHold(now: now, approving: current ? .fail(error) : nil, into: &actions)
            } else if attempt.ahead && onTime && attempt.timedOut != .requests {
                // Nobody waited: the current token stays in use; try again later.
                if current { backOffAhead(requiresReauthentication: failure.requiresReauthentication, now: now) }
                actions.events.append(
                    .refreshAheadFailed(error, duration: duration))
            } else {
                actions.events.append(.refreshFailed(error, duration: duration))
                if current, failure.requiresReauthentication, refreshes.running == nil {
                    forgetCredential(into: &actions)
                }
            }
        case .superseded:
            // The store holds another session, or none: the line asks `find()` which.
            if attempt.epoch == ids.epoch, credential?.generation == attempt.generation {
                forgetCredential(into: &actions)
            }
            if lineWasHeld { releaseHold(now: now, into: &actions) }
            settleProbesAfresh(probes, into: &actions)
        }
        return actions
    }

    /// The refresh `id` has run for `abandonAfter`: give it up.
    mutating func abandonLimitReached(attempt id: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard refreshes.running?.id == id, let running = refreshes.abandonRunning() else { return actions }
        actions.events.append(.refreshAbandoned(after: now - running.startedAt))
        // Waiters decide again: a new refresh of the same token may start now.
        releaseHold(now: now, into: &actions)
        // So do the probes that waited for it beside the line, each within its own timeout.
        settleProbesAfresh(running.probes, into: &actions)
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
        case .held, .loading, .evaluating:
            // Evaluating: user code (`isRefreshNeeded`) is slow; its waiters do not wait longer.
            expired = line.removeFirst(while: { $0.arrivedAt + timeout <= now })
        case .moving:
            break
        }
        let expiredProbes = refreshes.running?.probes.prefix(while: { $0.arrivedAt + timeout <= now }) ?? []
        refreshes.running?.probes.removeFirst(expiredProbes.count)
        if !expired.isEmpty || !expiredProbes.isEmpty {
            // Only waiters held by the refresh (not by a slow `find()` or freshness read) make its
            // result late.
            let heldByRefresh = (linePhase.isHeld && !expired.isEmpty) || !expiredProbes.isEmpty
            if linePhase.isHeld, !expired.isEmpty {
                refreshes.running?.timedOut = .requests
            } else if !expiredProbes.isEmpty, refreshes.running?.timedOut == Attempt.TimedOut.none {
                refreshes.running?.timedOut = .probes
            }
            let waited = heldByRefresh ? refreshes.running.map { now - $0.startedAt } ?? timeout : timeout
            actions.events.append(.refreshTimedOut(after: waited))
            var all = expired + expiredProbes
            if !expiredProbes.isEmpty { all.sort { $0.ticket < $1.ticket } }
            answer(all, .fail(.refreshTimedOut), into: &actions)
        }
        if linePhase.isHeld, line.isEmpty {
            releaseHold(now: now, into: &actions)
        }
        armWaitTimer(into: &actions)
        return actions
    }

    // MARK: - The app

    /// `invalidate()`: forget what is held; nothing found or refreshed before is kept.
    ///
    /// A line held by a refresh of what was forgotten goes on at once and asks `find()`: a login
    /// or logout saved meanwhile must not wait for that refresh, which says nothing about it. The
    /// refresh runs on until it ends or is abandoned, and no other starts before then.
    mutating func invalidate(now: TimeInterval) -> Actions {
        var actions = Actions()
        ids.epoch &+= 1
        dropApproval(into: &actions)
        if let old = credential { actions.displaced.append(old.value) }
        credential = nil
        releaseHold(now: now, into: &actions)
        // `refreshIfNeeded` calls waiting for the old login's refresh wait for it no more: like
        // the line, they ask `find()` now.
        let waitingForTheOldLogin = takeProbes()
        settleProbesAfresh(waitingForTheOldLogin, into: &actions)
        return actions
    }

    /// `adopt(_:)`: hold `value` from now on, in a new epoch; waiting requests use it.
    mutating func adopt(_ value: HeldCredential, now: TimeInterval) -> Actions {
        var actions = Actions()
        ids.epoch &+= 1
        ids.lastAdoptedAttempt = ids.attempt
        dropApproval(into: &actions)
        if let old = credential { actions.displaced.append(old.value) }
        credential = Held(value: value, generation: ids.newGeneration())
        releaseHold(now: now, into: &actions)
        // Probes that waited for the replaced login's refresh ask the line about this one.
        let waitingForTheReplacedLogin = takeProbes()
        settleProbesAfresh(waitingForTheReplacedLogin, into: &actions)
        return actions
    }
}
