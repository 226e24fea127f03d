import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Events of the line: requests arrive, leave (cancelled) and are moved on by the pump.
extension RefreshStateMachine {
    // MARK: - Requests

    /// A request (or a probe) starts waiting.
    ///
    /// - Parameters:
    ///   - request: The request, kept unsigned until it is answered.
    ///   - completion: Called with its answer by whoever takes it out of the machine.
    ///   - rejectedHeader: For a request the server rejected: the header value it carried.
    ///   - staleGeneration: The fast path read that this generation needs a refresh.
    /// - Returns: The request's ticket, and the actions.
    mutating func arrive(
        _ request: URLRequest,
        completion: @escaping AuthorizationTask.Completion,
        kind: Waiter.Kind = .request,
        rejectedHeader: String? = nil,
        staleGeneration: UInt64? = nil,
        now: TimeInterval
    ) -> (ticket: UInt64, actions: Actions) {
        let ticket = ids.newTicket()
        var rejectedGeneration: UInt64?
        if let staleGeneration, credential?.generation == staleGeneration {
            credential?.knownStale = true
        }
        if let rejectedHeader, let held = credential, case .success(rejectedHeader) = held.value.header {
            rejectedGeneration = held.generation
            // A refreshed token the server rejects while it is still fresh: refreshing again may
            // loop, so the window counts it. One that expired on its way is no loop.
            if held.issuedByRefresh, !held.knownStale { admission.count(now: now) }
            credential?.knownStale = true
        } else if let rejectedHeader, credential == nil {
            noteRejectedWhileUnheld(rejectedHeader)
        }
        line.append(
            Waiter(
                request: request, completion: completion, ticket: ticket, arrivedAt: now,
                rejectedGeneration: rejectedGeneration, kind: kind))
        var actions = Actions()
        actions.events.append(.requestWaiting(waiting: line.count))
        switch linePhase {
        case .held:
            addToHold(1)
            armWaitTimer(into: &actions)
        case .loading, .evaluating:
            armWaitTimer(into: &actions)
        case .moving:
            if handOut.pumpPending { break }
            if let credential, credential.knownStale, line.count == 1 {
                needRefresh(now: now, into: &actions)
            } else {
                schedulePump(into: &actions)
            }
        }
        return (ticket, actions)
    }

    /// Remembers a header value the server rejected while nothing was held. What was noted for
    /// requests that have all left the line by now is forgotten, and only the last few are kept.
    private mutating func noteRejectedWhileUnheld(_ header: String) {
        if line.isEmpty { rejectedWhileUnheld = [] }
        guard !rejectedWhileUnheld.contains(header) else { return }
        if rejectedWhileUnheld.count == Self.rejectedWhileUnheldLimit { rejectedWhileUnheld.removeFirst() }
        rejectedWhileUnheld.append(header)
    }

    /// How many rejected header values ``rejectedWhileUnheld`` keeps.
    static var rejectedWhileUnheldLimit: Int { 16 }

    /// The fast path read that the held credential recommends a refresh ahead.
    mutating func refreshRecommended(generation: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard credential?.generation == generation else { return actions }
        startAhead(now: now, into: &actions)
        return actions
    }

    /// A `refreshIfNeeded` probe read, on the fast path, that the held `generation` recommends a
    /// refresh. It starts one ahead if it may, and waits beside the line for the refresh of that
    /// generation, so that requests sent meanwhile are still signed at once; when none runs (none
    /// may start now), it is answered at once: the token still works. A probe that finds the fast
    /// path closed by now goes through the line.
    mutating func probeAhead(
        _ probe: URLRequest, completion: @escaping AuthorizationTask.Completion, generation: UInt64,
        now: TimeInterval
    ) -> (ticket: UInt64, actions: Actions) {
        guard let held = credential, held.generation == generation, fastPath() != nil else {
            return arrive(probe, completion: completion, kind: .probe, now: now)
        }
        var actions = Actions()
        startAhead(now: now, into: &actions)
        let ticket = ids.newTicket()
        let waiter = Waiter(
            request: probe, completion: completion, ticket: ticket, arrivedAt: now, rejectedGeneration: nil,
            kind: .probe)
        if refreshes.running?.generation == generation, refreshes.running?.epoch == ids.epoch {
            refreshes.running?.probes.append(waiter)
            armWaitTimer(into: &actions)
        } else {
            answer([waiter], .sign(held.value), into: &actions)
        }
        return (ticket, actions)
    }

    /// A request is cancelled: when its completion has not been called yet, it is taken, and
    /// leaves in ``Actions/cancelled`` for the driver to complete. It may still wait in the line
    /// or beside it, or have been handed out to be answered (its completion not yet called: the
    /// deliverer skips it then).
    mutating func cancel(ticket: UInt64, now: TimeInterval) -> Actions {
        var actions = Actions()
        if let waiter = line.remove(ticket: ticket) {
            actions.cancelled = waiter
            if line.isEmpty, linePhase.isHeld {
                releaseHold(now: now, into: &actions)
            }
        } else if let index = refreshes.running?.probes.firstIndex(where: { $0.ticket == ticket }) {
            actions.cancelled = refreshes.running?.probes.remove(at: index)
        } else if let (group, index) = handOut.delivery.place(of: ticket), group.claims.take(index) {
            actions.cancelled = group.waiters[index]
        }
        return actions
    }

    /// Every request waiting in the line, and every probe beside it, is answered with
    /// ``RefreshQueueError/cancelled``, in arrival order. A refresh in flight runs on, its result
    /// adopted as ever; the line moves again (the queue resumes), so that requests arriving later
    /// wait for that refresh, or decide afresh, as any request does. Waiters already handed out
    /// for answering keep the answer they were given.
    mutating func cancelAll(now: TimeInterval) -> Actions {
        var actions = Actions()
        let waiters = (line.removeAll() + takeProbes()).sorted { $0.ticket < $1.ticket }
        dropApproval(into: &actions)
        releaseHold(now: now, into: &actions)
        answer(waiters, .fail(.cancelled), into: &actions)
        return actions
    }

    /// Whether the request with `ticket` still waits for its completion to be called: in the
    /// line, beside it, or handed out and not yet taken by the deliverer.
    func isWaiting(ticket: UInt64) -> Bool {
        if line.contains(ticket: ticket) { return true }
        if refreshes.running?.probes.contains(where: { $0.ticket == ticket }) == true { return true }
        guard let (group, index) = handOut.delivery.place(of: ticket) else { return false }
        return !group.claims.isTaken(index)
    }

    /// Answers handed out earlier are delivered: every one of them is made (signed) and all but
    /// the last have been delivered; the last is delivered next.
    ///
    /// When the pump handed them out (`byPump`) and has nothing more to do, it stops here rather
    /// than after the last delivery, so that a request sent by the code the last answer wakes
    /// finds the line idle and takes the fast path. Returns whether the pump stopped.
    @discardableResult
    mutating func answered(_ count: Int, byPump: Bool = false) -> Bool {
        handOut.unanswered -= count
        guard byPump, !linePhase.isMoving || line.isEmpty else { return false }
        handOut.pumpPending = false
        return true
    }

    /// The group being delivered has been delivered, its last completion included: the next
    /// group handed out meanwhile, for the same deliverer, or `nil` when none is left; and the
    /// group delivered, for the caller to let go of outside the closure's lock. Delivering one
    /// group at a time keeps completions in arrival order and never runs two at once, whoever
    /// answers: the pump, a timer, a refresh that ended.
    mutating func delivered() -> (next: Answers?, done: Answers?) {
        handOut.delivery.next()
    }

    // MARK: - The pump

    /// The pump's next step, on the serial queue.
    mutating func pump(now: TimeInterval) -> PumpStep {
        var actions = Actions()
        guard case .moving(let approval) = linePhase, let head = line.first else {
            handOut.pumpPending = false
            return .idle(actions)
        }
        if let approval, head.ticket <= approval.throughTicket {
            linePhase = .moving(approval: nil)
            answer(line.removeFirst(while: { $0.ticket <= approval.throughTicket }), approval.outcome, into: &actions)
            return .perform(actions)
        }
        dropApproval(into: &actions)
        guard let credential else {
            linePhase = .loading(epoch: ids.epoch, spent: [])
            armWaitTimer(into: &actions)
            return .find(actions)
        }
        if credential.knownStale || head.rejectedGeneration == credential.generation {
            needRefresh(now: now, into: &actions)
            return .perform(actions)
        }
        linePhase = .evaluating(generation: credential.generation)
        armWaitTimer(into: &actions)
        return .evaluate(credential.value, generation: credential.generation, actions)
    }

    /// `find()` returned what it found. Only the pump's `find` step reports it, and nothing but
    /// this report and ``findFailed(_:now:)`` ends the loading phase: any other phase is a bug.
    mutating func found(_ found: HeldCredential?, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard case .loading(let loadingEpoch, let spent) = linePhase else {
            preconditionFailure("find() reported while the line is \(linePhase.name), not loading")
        }
        linePhase = .moving(approval: nil)
        actions.events.append(.authenticationLoaded(found: found != nil))
        guard loadingEpoch == ids.epoch, credential == nil else {
            // A logout or a login happened while `find()` ran: what it found may be stale.
            if let found { actions.displaced.append(found) }
            return actions
        }
        if let header = found?.signingHeader, spent.contains(header) {
            // A copy of what a refresh ending meanwhile refreshed, read before it ended: spent.
            // The pump asks `find()` again, for what the refresh persisted.
            if let found { actions.displaced.append(found) }
            return actions
        }
        if let found {
            credential = Held(value: found, generation: ids.newGeneration())
            if let header = found.signingHeader, rejectedWhileUnheld.contains(header) {
                // The server rejected this very token while nothing was held: refresh it, do not
                // send it again.
                credential?.knownStale = true
            }
        } else if let first = line.removeFirst() {
            // `find()` is asked again for the next waiter: a login saved meanwhile is seen.
            let sendsUnsigned = first.kind == .request && configuration.missingAuthentication == .sendUnsigned
            answer([first], sendsUnsigned ? .sendUnsigned : .fail(.notAuthenticated), into: &actions)
        }
        return actions
    }

    /// `find()` failed: the stored authentication exists but cannot be read now. The waiter at
    /// the front fails with `error`; the next one asks again.
    mutating func findFailed(_ error: RefreshQueueError, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard case .loading = linePhase else {
            preconditionFailure("find() failed while the line is \(linePhase.name), not loading")
        }
        linePhase = .moving(approval: nil)
        if let first = line.removeFirst() {
            answer([first], .fail(error), into: &actions)
        }
        return actions
    }

    /// The pump read the freshness of `generation`. Only the pump's `evaluate` step reports it, for
    /// the generation it evaluates, and nothing else ends the evaluating phase: anything else is a
    /// bug. What the app did meanwhile (`adopt(_:)`, `invalidate()`, a 401) is expected: the
    /// freshness read then says nothing about what is held, and nothing is decided on it.
    mutating func evaluated(generation: UInt64, freshness: Freshness, now: TimeInterval) -> Actions {
        var actions = Actions()
        guard case .evaluating(let evaluating) = linePhase, evaluating == generation else {
            preconditionFailure("a freshness read of generation \(generation) while the line is \(linePhase.name)")
        }
        linePhase = .moving(approval: nil)
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
                if refreshes.running?.generation == generation, refreshes.running?.epoch == ids.epoch {
                    // `refreshIfNeeded` waits for the refresh ahead; requests do not.
                    signed = waiters.filter { $0.kind == .request }
                    refreshes.running?.probes += waiters.filter { $0.kind == .probe }
                    armWaitTimer(into: &actions)
                }
            }
            answer(signed, .sign(held.value), into: &actions)
        }
        return actions
    }
}
