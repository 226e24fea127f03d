import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The driver: everything the state machine cannot do itself. It takes the lock around each event,
// suspends and resumes the queue under it, and after leaving it performs the rest: answers,
// refreshes, timers, events, and the release of what was displaced.

/// What the closure's lock guards: the state machine, and the ledger the driver hands to the
/// tasks of requests that start waiting (the machine never reads it).
struct LockedState: Sendable {
    var machine: RefreshStateMachine
    var taskLedger: CancellationLedger?
}

extension RefreshingRequestClosure {
    typealias Machine = RefreshStateMachine

    /// What the fast path decided.
    enum FastPathResult {
        case signed(URLRequest)
        /// The request must go through the line; `staleGeneration` when the fast path read that
        /// the held generation needs a refresh.
        case wait(staleGeneration: UInt64?)
    }

    // MARK: - Fast path

    /// The answer for a request that is not to be signed: unchanged (the predicate exempts it, or
    /// it goes to an origin the token does not belong to) or refused (plain http elsewhere);
    /// `nil` for a request to sign.
    @inline(__always)
    func answerWithoutSigning(_ request: URLRequest) -> Result<URLRequest, any Error>? {
        guard requiresAuthentication(request) else { return .success(request) }
        switch origins.decision(for: request) {
        case .sign: return nil
        case .passUnsigned:
            reportUnsigned(request)
            return .success(request)
        case .refuse(let error): return .failure(error)
        }
    }

    /// Reports, once per origin, a request that goes out unsigned because its origin is not
    /// allowed: a mistyped origin otherwise fails silently, with a 401 from the server.
    private func reportUnsigned(_ request: URLRequest) {
        guard let onEvent, let origin = origins.disallowedOrigin(of: request.url) else { return }
        let first = unsignedOrigins.withLock { reported in
            // Bounded: an app that talks to many hosts keeps reporting the first ones only.
            guard reported.count < Self.reportedOriginsLimit, !reported.contains(origin) else { return false }
            reported.insert(origin)
            return true
        }
        if first { onEvent(.requestSentUnsigned(origin: origin)) }
    }

    /// How many origins ``reportUnsigned(_:)`` reports at most.
    static var reportedOriginsLimit: Int { 64 }

    /// `request` signed at once, when a valid authentication is held and nobody waits.
    @inline(__always)
    func signWithoutWaiting(_ request: URLRequest) -> FastPathResult {
        // Only the credential leaves the lock as a reference, retained once; the rest are numbers.
        var fast = (generation: UInt64(0), recommendationAfter: TimeInterval?.none)
        let held = state.withLock { state -> HeldCredential? in
            guard let path = state.machine.fastPath() else { return nil }
            fast = (path.generation, path.recommendationAfter)
            return path.credential
        }
        guard let credential = held, credential.signingHeader != nil else { return .wait(staleGeneration: nil) }
        // User code, read outside the lock.
        if credential.isRefreshNeeded { return .wait(staleGeneration: fast.generation) }
        if let after = fast.recommendationAfter, credential.isRefreshRecommended, now() >= after {
            recommendRefresh(of: fast.generation)
        }
        var signed = request
        credential.sign(&signed, scheme: scheme)
        return .signed(signed)
    }

    /// A `refreshIfNeeded` probe. While a valid token is held and nobody waits, it does not join
    /// the line, where requests sent meanwhile would queue behind it: it is answered at once when
    /// the token is fresh, or waits beside the line for the refresh ahead it starts or joins.
    /// Otherwise it goes through the line like a request.
    func startProbe(completion: @escaping AuthorizationTask.Completion) -> AuthorizationTask {
        guard let path = state.withLock({ $0.machine.fastPath() }), path.credential.signingHeader != nil else {
            return enqueue(Self.probeRequest, kind: .probe, completion: completion)
        }
        // User code, read outside the lock.
        switch path.credential.freshness {
        case .fresh:
            completion(.success(Self.probeRequest))
            return .finished
        case .needed:
            return enqueue(Self.probeRequest, kind: .probe, staleGeneration: path.generation, completion: completion)
        case .recommended:
            let now = self.now()
            var task = AuthorizationTask.finished
            let actions = updateState { state in
                let (ticket, actions) = state.machine.probeAhead(
                    Self.probeRequest, completion: completion, generation: path.generation, now: now)
                task = handle(for: ticket, in: &state)
                return actions
            }
            perform(actions)
            return task
        }
    }

    private func recommendRefresh(of generation: UInt64) {
        let now = self.now()
        perform(update { $0.refreshRecommended(generation: generation, now: now) })
    }

    // MARK: - The line

    func enqueue(
        _ request: URLRequest,
        kind: Waiter.Kind = .request,
        rejectedHeader: String? = nil,
        staleGeneration: UInt64? = nil,
        completion: @escaping AuthorizationTask.Completion
    ) -> AuthorizationTask {
        let now = self.now()
        var task = AuthorizationTask.finished
        let actions = updateState { state in
            let (ticket, actions) = state.machine.arrive(
                request, completion: completion, kind: kind, rejectedHeader: rejectedHeader,
                staleGeneration: staleGeneration, now: now)
            task = handle(for: ticket, in: &state)
            return actions
        }
        perform(actions)
        return task
    }

    /// The task of the waiting request with `ticket`, sharing the current ledger (under the lock).
    private func handle(for ticket: UInt64, in state: inout LockedState) -> AuthorizationTask {
        if let ledger = state.taskLedger { return AuthorizationTask(ticket: ticket, ledger: ledger) }
        let ledger = CancellationLedger(owner: self)
        state.taskLedger = ledger
        return AuthorizationTask(ticket: ticket, ledger: ledger)
    }

    /// Moves the line on, on the serial queue: loads, reads freshness, answers in order, until
    /// the machine says there is nothing to do (or the line waits for a refresh).
    private func pump() {
        while true {
            let now = self.now()
            var step = Machine.PumpStep.idle(Machine.Actions())
            let applied = update { machine in
                step = machine.pump(now: now)
                return step.actions
            }
            // Whenever the pump answers, it may stop with the last answer (see `answer`).
            if perform(applied, byPump: true) { return }
            switch step {
            case .perform:
                continue
            case .idle:
                return
            case .find:
                // User code, on the queue, outside the lock.
                let found = Result { try find().map { Self.credential(for: $0, scheme: scheme) } }
                let now = self.now()
                let actions: Machine.Actions
                switch found {
                case .success(let credential):
                    actions = update { $0.found(credential, now: now) }
                case .failure(let error):
                    actions = update { $0.findFailed(.authenticationUnreadable(error), now: now) }
                }
                if perform(actions, byPump: true) { return }
            case .evaluate(let credential, let generation, _):
                let freshness = credential.freshness
                let now = self.now()
                let actions = update { $0.evaluated(generation: generation, freshness: freshness, now: now) }
                if perform(actions, byPump: true) { return }
            }
        }
    }

    /// Delivers `answers`, then every group the machine handed out meanwhile, one group at a
    /// time: completions run in arrival order and never two at once, whichever threads answer
    /// (the pump, a timer, a refresh that ended). Returns whether the pump stopped with the first
    /// group (`byPump`: the pump handed it out).
    private func answer(_ answers: Machine.Answers, byPump: Bool) -> Bool {
        let stopped = deliver(answers, byPump: byPump)
        // The group delivered leaves the lock with `done`, and is released here, outside it.
        while let next = state.withLock({ $0.machine.delivered() }).next {
            deliver(next, byPump: false)
        }
        return stopped
    }

    /// Completes `answers`, in order, and tells the machine once every answer is made and all but
    /// the last are delivered, just before the last: a request that the last completion's code
    /// sends at once (an awaiting task resumed, a callback that sends the next request) then finds
    /// nothing waiting and nothing being answered, and is signed at once. None can be signed past
    /// a waiter: each is signed before the machine hears of it. Returns whether the pump stopped
    /// there.
    @discardableResult
    private func deliver(_ answers: Machine.Answers, byPump: Bool) -> Bool {
        let waiters = answers.waiters
        let claims = answers.claims
        let result = answering(answers.outcome)
        let last = waiters.count - 1
        // Each waiter is taken just before its completion is called: one cancelled meanwhile
        // (its completion already called) is skipped.
        for index in 0..<last where claims.take(index) {
            waiters[index].completion(result(waiters[index]))
        }
        let final = claims.take(last) ? result(waiters[last]) : nil
        let count = waiters.count
        let stopped = state.withLock { $0.machine.answered(count, byPump: byPump) }
        if let final { waiters[last].completion(final) }
        return stopped
    }

    /// What each waiter is answered with, for `outcome`; the header is read from the credential
    /// once for the whole group.
    private func answering(_ outcome: Machine.Outcome) -> (Waiter) -> Result<URLRequest, any Error> {
        switch outcome {
        case .sign(let credential):
            switch credential.header {
            case .success(let header):
                return { [scheme] waiter in
                    guard waiter.kind == .request else { return .success(waiter.request) }
                    var signed = waiter.request
                    scheme.sign(&signed, with: header)
                    return .success(signed)
                }
            case .failure(let error):
                return { _ in .failure(error) }
            }
        case .fail(let error):
            let answer = error.requestError
            return { _ in .failure(answer) }
        case .sendUnsigned:
            return { waiter in .success(waiter.request) }
        }
    }

    // MARK: - Refreshing

    /// Calls `refresh()` off the queue: user code that blocks or re-enters cannot stall the line.
    private func startRefresh(_ start: Machine.StartRefresh) {
        guard let authentication = start.credential.authentication as? Authentication else { return }
        // The lease keeps the closure alive until the refresh ends or is abandoned; the abandon
        // timer holds only the lease, so it does not keep the closure once the refresh is over.
        let lease = Locked<RefreshingRequestClosure?>(self)
        let attempt = start.attempt
        let budget = RefreshBudget(abandonAfter: abandonAfter)
        timerQueue.asyncAfter(deadline: .after(seconds: start.abandonAt - now())) {
            let closure = lease.withLock { lease in
                defer { lease = nil }
                return lease
            }
            closure?.abandonLimitReached(attempt)
        }
        let timerQueue = self.timerQueue
        DispatchQueue.global().async {
            self.refresh(authentication, budget).observe { [weak self] result in
                let closure = self
                let end = { @Sendable in
                    closure?.refreshEnded(attempt, with: result)
                    let ended = lease.withLock { lease in
                        defer { lease = nil }
                        return lease
                    }
                    _ = ended
                }
                // An abandoned future reports on the thread that dropped it, perhaps inside that
                // code's own lock: leave it at once, and end the refresh (events, answers) elsewhere.
                if case .failure(let error) = result, (error as? FutureError) == .abandoned {
                    timerQueue.async(execute: end)
                } else {
                    end()
                }
            }
        }
    }

    private func refreshEnded(_ attempt: UInt64, with result: Result<Authentication, any Error>) {
        // User code (the token, its freshness, the error's answers) is read before the lock.
        let outcome: Machine.RefreshResult
        switch result {
        case .success(let authentication):
            let credential = Self.credential(for: authentication, scheme: scheme)
            if case .failure(let unusable) = credential.header {
                // A token that cannot be a header value is no refresh at all: not adopted.
                outcome = .failed(Machine.Failure(error: unusable))
            } else {
                outcome = .refreshed(credential, credential.freshness)
            }
        case .failure(let error) where error is RefreshSuperseded:
            outcome = .superseded
        case .failure(let error):
            outcome = .failed(
                Machine.Failure(
                    error: error, isTransport: Self.isTransportError(error),
                    retryAfter: ErrorClassification.retryAfter(error),
                    requiresReauthentication: ErrorClassification.requiresReauthentication(error)))
        }
        let now = self.now()
        perform(update { $0.refreshEnded(attempt: attempt, outcome, now: now) })
    }

    private func abandonLimitReached(_ attempt: UInt64) {
        let now = self.now()
        perform(update { $0.abandonLimitReached(attempt: attempt, now: now) })
    }

    // MARK: - Timers

    private func armWaitTimer(at deadline: TimeInterval) {
        timerQueue.asyncAfter(deadline: .after(seconds: deadline - now())) { [weak self] in
            guard let self else { return }
            let now = self.now()
            self.perform(self.update { $0.timerFired(deadline: deadline, now: now) })
        }
    }

    // MARK: - Performing actions

    /// Runs `event` on the machine under the lock, and performs the queue changes there too.
    func update(_ event: (inout Machine) -> Machine.Actions) -> Machine.Actions {
        updateState { event(&$0.machine) }
    }

    /// ``update(_:)`` for an event that also reads or writes the task ledger.
    func updateState(_ event: (inout LockedState) -> Machine.Actions) -> Machine.Actions {
        state.withLock { state in
            let actions = event(&state)
            switch actions.queue {
            case .none: break
            case .suspend: queue.suspend()
            case .resume: queue.resume()
            }
            if actions.schedulePump {
                // The block keeps the closure alive until the line has moved on.
                queue.async { self.pump() }
            }
            return actions
        }
    }

    /// Performs what is left of `actions` after the lock: a cancelled request's completion, events,
    /// the refresh, timers, then the answers, so that neither the refresh nor a timer waits for
    /// completion handlers. What they displaced is released when they go out of scope, here,
    /// outside the lock.
    ///
    /// - Returns: Whether the pump stopped with the answers (`byPump`: the pump performs them).
    @discardableResult
    func perform(_ actions: Machine.Actions, byPump: Bool = false) -> Bool {
        // A request taken out by its cancellation completes first, at once, on the cancelling thread.
        actions.cancelled?.completion(.failure(RefreshQueueError.cancelled))
        for event in actions.events {
            onEvent?(event)
        }
        if let start = actions.refresh {
            startRefresh(start)
        }
        if let deadline = actions.waitTimer {
            armWaitTimer(at: deadline)
        }
        guard let answers = actions.answers else { return false }
        return answer(answers, byPump: byPump)
    }

    // MARK: - Helpers

    /// `authentication` with its header value, computed once. Reads the token: user code.
    static func credential(for authentication: Authentication, scheme: AuthorizationScheme) -> HeldCredential {
        let token = authentication.accessToken
        let header = Result { () throws(RefreshQueueError) in try scheme.headerValue(for: token) }
        return HeldCredential(authentication: authentication, header: header)
    }

    /// The default refresh: `Authentication.refresh()`, bounded by the budget when the
    /// authentication knows how (the built-in OAuth 2.0 one does).
    static func refreshWithinBudget(_ authentication: Authentication, _ budget: RefreshBudget) -> Future<Authentication>
    {
        if let bounded = authentication as? any BudgetedRefresh,
            let future = bounded.refresh(within: budget) as? Future<Authentication>
        {
            return future
        }
        return authentication.refresh()
    }

    /// Whether a refresh failed in a way that must not count against the refresh window: the
    /// network failed, or the store cannot be read now.
    static func isTransportError(_ error: any Error) -> Bool {
        // A store the device keeps locked is no reason to count the refresh against the window.
        if case RefreshQueueError.authenticationUnreadable = error { return true }
        // Nor is a store lock another process holds: nobody refused anything.
        if case AuthenticationStoreError.lockTimedOut = error { return true }
        return ErrorClassification.isTransportFailure(error)
    }
}

extension RefreshingRequestClosure: TaskCancelling {
    func isWaiting(ticket: UInt64) -> Bool {
        state.withLock { $0.machine.isWaiting(ticket: ticket) }
    }

    func cancelWaiting(ticket: UInt64, recordingIn ledger: CancellationLedger) {
        let now = self.now()
        let actions = updateState { state in
            let actions = state.machine.cancel(ticket: ticket, now: now)
            if actions.cancelled != nil {
                // Recorded before the request leaves the lock: whoever sees it answered also
                // sees it cancelled. Requests that arrive from now on share a new ledger, so that
                // a ledger records only cancellations of requests that were waiting together.
                ledger.record(ticket)
                if state.taskLedger === ledger { state.taskLedger = nil }
            }
            return actions
        }
        perform(actions)
    }
}

extension RefreshStateMachine.PumpStep {
    /// The actions the step carries, to perform before acting on the step itself.
    var actions: RefreshStateMachine.Actions {
        switch self {
        case .perform(let actions), .idle(let actions), .find(let actions), .evaluate(_, _, let actions): return actions
        }
    }
}
