import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The refresh state machine alone, driven by a seeded random scheduler: requests, pumps, loads,
/// refresh results, timers, the clock, logouts, logins, cancellations and 401s interleave in every
/// order, and the invariants are checked after every step. No threads, no real time.
///
/// `REFRESH_MODEL_STEPS=N` runs more steps, `REFRESH_MODEL_SEED_OFFSET=K` other schedules;
/// `REFRESH_MODEL_SEED=S` replays one schedule, printing its trace.
@Suite("Refresh state machine, random schedules", .timeLimit(.minutes(2)))
struct RefreshStateMachineModelTests {
    @Test func invariantsHoldOverAHundredThousandRandomSteps() {
        let environment = ProcessInfo.processInfo.environment
        let stepsPerRun = 250
        if let seed = environment["REFRESH_MODEL_SEED"].flatMap(UInt64.init) {
            var world = ModelWorld(seed: seed, recording: true)
            let failure = world.run(steps: stepsPerRun)
            print(world.trace.joined(separator: "\n"))
            #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            return
        }
        let total = environment["REFRESH_MODEL_STEPS"].flatMap(Int.init) ?? 100_000
        // Another set of schedules than the default one, to explore further.
        let offset = environment["REFRESH_MODEL_SEED_OFFSET"].flatMap(UInt64.init) ?? 0
        let runs = max(1, total / stepsPerRun)
        var stepsRun = 0
        for run in 0..<runs {
            let seed = (UInt64(run) &+ offset) &* 0x9E37_79B9_7F4A_7C15 &+ 12_345
            var world = ModelWorld(seed: seed, recording: false)
            if let failure = world.run(steps: stepsPerRun) {
                var replay = ModelWorld(seed: seed, recording: true)
                _ = replay.run(steps: stepsPerRun)
                Issue.record(
                    """
                    seed \(seed) broke an invariant: \(failure)
                    replay with REFRESH_MODEL_SEED=\(seed); trace:
                    \(replay.trace.suffix(60).joined(separator: "\n"))
                    """)
                return
            }
            stepsRun += world.steps
        }
        #expect(stepsRun >= min(total, 100_000) - stepsPerRun)
    }
}

/// An authentication whose freshness the model sets; the machine never reads it.
private struct ModelAuthentication: RefreshableAuthentication {
    let accessToken: String
    var isRefreshNeeded: Bool { false }
    func refresh() -> Future<ModelAuthentication> { Future(value: self) }
    static func find() -> ModelAuthentication? { nil }
}

/// A small, fast, seedable random generator (SplitMix64).
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// The machine plus a simulated driver, and everything the invariants need to know.
private struct ModelWorld {
    typealias Machine = RefreshStateMachine

    struct Request {
        let ticket: UInt64
        let arrivedAt: Double
        let kind: Waiter.Kind
        /// The held credential the server rejected (HTTP 401) for this request: never sign with it.
        var rejected: HeldCredential?
        /// The header the server rejected for this request while nothing was held: never sign
        /// with a copy of it that `find()` reads.
        var rejectedWhileUnheld: String?
        var answers = 0
        var cancelled = false
    }

    /// A group of answers on its way to its completions.
    struct Delivery {
        let tickets: [UInt64]
        /// Delivered by the pump, which takes no other step meanwhile.
        let onPump: Bool
        /// The group the pump handed out itself: the one that may stop it.
        let firstOfPump: Bool
        /// The machine has been told (`answered`), just before the last completion.
        var told: Bool
    }

    /// Answers handed out and not yet reported answered: the group being delivered until the
    /// machine is told, and the deferred ones.
    var outstandingAnswers: Int {
        let current = delivery.map { $0.told ? 0 : $0.tickets.count } ?? 0
        return current + deferredGroups.reduce(0) { $0 + $1.count }
    }

    struct RunningRefresh {
        let attempt: UInt64
        let credential: HeldCredential
        var abandoned = false
    }

    let timeout = 2.0
    let abandonAfter = 5.0
    var machine: Machine
    var random: SeededRandom
    var now = 100.0
    var steps = 0
    let recording: Bool
    var trace: [String] = []

    // The simulated driver.
    var suspended = 0
    var pumpScheduled = false
    var pumpRunning = false
    var pumpAwaiting: Machine.PumpStep?
    /// The group of answers being delivered, by the pump (before its next step, as the driver
    /// does) or by another thread; groups handed out meanwhile wait in the machine, in order.
    var delivery: Delivery?
    /// The tickets of the groups the machine deferred, in the order it deferred them.
    var deferredGroups: [[UInt64]] = []
    /// The pump was told to stop with the group it delivers: it ends when the delivery does.
    var pumpStops = false
    var refreshes: [RunningRefresh] = []
    var waitTimers: [Double] = []
    var abandonTimers: [(attempt: UInt64, at: Double)] = []

    // What the invariants check.
    var requests: [UInt64: Request] = [:]
    var lastAnsweredRequestTicket: UInt64?
    var freshness: [ObjectIdentifier: Freshness] = [:]
    var credentials: [HeldCredential] = []
    /// The credential a request was last rejected with: `find()` often reads a copy of it.
    var lastRejected: HeldCredential?
    var tokenCounter = 0
    var failure: String?

    init(seed: UInt64, recording: Bool) {
        random = SeededRandom(seed: seed)
        self.recording = recording
        let window = RefreshWindow(maximumRefreshes: 1 + Int(seed % 6), interval: 10)
        machine = Machine(configuration: .init(refreshTimeout: timeout, abandonAfter: abandonAfter, window: window))
    }

    // MARK: - Running

    mutating func run(steps count: Int) -> String? {
        for _ in 0..<count {
            step()
            steps += 1
            checkInvariants()
            if let failure { return failure }
        }
        drain()
        checkInvariants()
        if failure == nil {
            for request in requests.values where request.answers != 1 && !request.cancelled {
                failure = "request \(request.ticket) answered \(request.answers) times after draining"
                break
            }
        }
        return failure
    }

    private mutating func note(_ text: String) {
        if recording { trace.append(String(format: "%8.3f  ", now) + text) }
    }

    private mutating func step() {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<22: arriveThroughFastPath()
        case 22..<26: arrive(kind: .request, rejected: true)
        case 26..<29: probeThroughFastPath()
        case 29..<47: runPump()
        case 47..<55: finishRefresh()
        case 55..<62: fireWaitTimer()
        case 62..<65: fireAbandonTimer()
        case 65..<74: advanceClock()
        case 74..<80: ageCredential()
        case 80..<83: apply(machine.invalidate(now: now), "invalidate")
        case 83..<85: adoptNew()
        case 85..<90: cancelOne()
        case 90..<92: apply(machine.cancelAll(now: now), "cancel all")
        default: deliverAnswers()
        }
    }

    /// Ends everything outstanding, so that every request must end answered.
    private mutating func drain() {
        for _ in 0..<10_000 {
            if pumpAwaiting != nil || delivery?.onPump == true || (pumpScheduled && (suspended == 0 || pumpRunning)) {
                runPump()
            } else if delivery != nil {
                deliverAnswers()
            } else if refreshes.contains(where: { !$0.abandoned }) || !refreshes.isEmpty {
                finishRefresh()
            } else if !waitTimers.isEmpty {
                fireWaitTimer()
            } else if !abandonTimers.isEmpty {
                fireAbandonTimer()
            } else {
                return
            }
            checkInvariants()
            if failure != nil { return }
        }
        failure = "could not drain in 10,000 steps"
    }

    // MARK: - Events

    private mutating func arriveThroughFastPath() {
        guard let fast = machine.fastPath() else {
            arrive(kind: .request, rejected: false)
            return
        }
        if requests.values.contains(where: { $0.answers == 0 && !$0.cancelled && $0.kind == .request }) {
            failure = "the fast path signed while an earlier request was still waiting"
            return
        }
        switch freshness[ObjectIdentifier(fast.credential)] ?? .fresh {
        case .needed:
            arrive(kind: .request, rejected: false, staleGeneration: fast.generation)
        case .recommended:
            note("fast path: signed with generation \(fast.generation), refresh recommended")
            if let after = fast.recommendationAfter, now >= after {
                apply(machine.refreshRecommended(generation: fast.generation, now: now), "recommend")
            }
        case .fresh:
            note("fast path: signed with generation \(fast.generation)")
        }
    }

    /// `refreshIfNeeded`, as the driver starts it: through the fast path when it is open, and
    /// sometimes with another event between reading the fast path and acting on it (a race).
    private mutating func probeThroughFastPath() {
        guard let fast = machine.fastPath() else {
            arrive(kind: .probe, rejected: false)
            return
        }
        switch freshness[ObjectIdentifier(fast.credential)] ?? .fresh {
        case .fresh:
            note("probe: answered at once, generation \(fast.generation) fresh")
        case .needed:
            arrive(kind: .probe, rejected: false, staleGeneration: fast.generation)
        case .recommended:
            switch Int.random(in: 0..<8, using: &random) {
            case 0: arrive(kind: .request, rejected: false)
            case 1: apply(machine.invalidate(now: now), "invalidate")
            case 2: adoptNew()
            case 3: finishRefresh()
            default: break
            }
            let (ticket, actions) = machine.probeAhead(
                URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, generation: fast.generation,
                now: now)
            requests[ticket] = Request(ticket: ticket, arrivedAt: now, kind: .probe, rejected: nil)
            apply(actions, "probe \(ticket) ahead of generation \(fast.generation)")
        }
    }

    private mutating func arrive(kind: Waiter.Kind, rejected: Bool, staleGeneration: UInt64? = nil) {
        var header: String?
        var rejectedHeld: HeldCredential?
        if rejected, let some = credentials.randomElement(using: &random), case .success(let value) = some.header {
            header = value
            lastRejected = some
            if some === machine.snapshot.credential { rejectedHeld = some }
        }
        let unheld = machine.snapshot.credential == nil
        let (ticket, actions) = machine.arrive(
            URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, kind: kind, rejectedHeader: header,
            staleGeneration: staleGeneration, now: now)
        requests[ticket] = Request(
            ticket: ticket, arrivedAt: now, kind: kind, rejected: rejectedHeld,
            rejectedWhileUnheld: unheld ? header : nil)
        apply(actions, "arrive \(ticket) \(kind)\(header != nil ? " rejected" : "")")
    }

    private mutating func runPump() {
        if delivery?.onPump == true {
            advanceDelivery()
            return
        }
        if let awaiting = pumpAwaiting {
            pumpAwaiting = nil
            switch awaiting {
            case .find:
                // Sometimes a copy of a token seen before (the store still holds it), as a new
                // object with the same header.
                let found: HeldCredential? =
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0..<3: newCredential()
                    case 3 where !credentials.isEmpty: copyOfCredential()
                    default: credentials.isEmpty ? newCredential() : nil
                    }
                apply(machine.found(found, now: now), "found \(found.map(name) ?? "nothing")", byPump: true)
            case .evaluate(let credential, let generation, _):
                let value = freshness[ObjectIdentifier(credential)] ?? .fresh
                apply(
                    machine.evaluated(generation: generation, freshness: value, now: now),
                    "evaluated generation \(generation): \(value)", byPump: true)
            case .perform, .idle:
                break
            }
            return
        }
        guard pumpScheduled, suspended == 0 || pumpRunning else { return }
        pumpRunning = true
        let step = machine.pump(now: now)
        switch step {
        case .perform(let actions):
            apply(actions, "pump: perform", byPump: true)
        case .idle(let actions):
            pumpRunning = false
            pumpScheduled = false
            apply(actions, "pump: idle")
        case .find(let actions):
            apply(actions, "pump: find", byPump: true)
            pumpAwaiting = step
        case .evaluate(_, let generation, let actions):
            apply(actions, "pump: evaluate generation \(generation)", byPump: true)
            pumpAwaiting = step
        }
    }

    private mutating func finishRefresh() {
        guard !refreshes.isEmpty else { return }
        let index = Int.random(in: 0..<refreshes.count, using: &random)
        let refresh = refreshes.remove(at: index)
        let result: Machine.RefreshResult
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: result = .refreshed(newCredential(.fresh), .fresh)
        case 4: result = .refreshed(newCredential(.recommended), .recommended)
        case 5: result = .refreshed(newCredential(.needed), .needed)
        case 6: result = .failed(.init(error: FutureError.abandoned))
        case 7: result = .failed(.init(error: URLError(.timedOut), isTransport: true, retryAfter: nil))
        case 8:
            result = .failed(
                .init(
                    error: URLError(.badServerResponse), retryAfter: 3,
                    requiresReauthentication: Bool.random(using: &random)))
        default: result = .superseded
        }
        apply(
            machine.refreshEnded(attempt: refresh.attempt, result, now: now),
            "refresh \(refresh.attempt) ended: \(result)")
    }

    private mutating func fireWaitTimer() {
        guard let deadline = waitTimers.min() else { return }
        waitTimers.remove(at: waitTimers.firstIndex(of: deadline)!)
        // Timers fire at their time or a little later.
        now = max(now, deadline + Double.random(in: 0..<0.01, using: &random))
        apply(machine.timerFired(deadline: deadline, now: now), "wait timer \(deadline) fired")
        // Whoever waits for a refresh, for `find()` or for a freshness read has waited less than
        // `refreshTimeout` once a timer has fired.
        if let due = machine.snapshot.earliestWaitDeadline, due <= now {
            failure = "a waiter due at \(due) still waits after the timer fired at \(now)"
        }
    }

    private mutating func fireAbandonTimer() {
        guard let timer = abandonTimers.min(by: { $0.at < $1.at }) else { return }
        abandonTimers.removeAll { $0.attempt == timer.attempt }
        now = max(now, timer.at)
        if let index = refreshes.firstIndex(where: { $0.attempt == timer.attempt }) {
            refreshes[index].abandoned = true
        }
        apply(machine.abandonLimitReached(attempt: timer.attempt, now: now), "abandon limit of \(timer.attempt)")
    }

    private mutating func advanceClock() {
        now += [0.001, 0.05, 0.5, 1.5, 3][Int.random(in: 0..<5, using: &random)]
        note("clock advanced")
    }

    private mutating func ageCredential() {
        guard let credential = machine.snapshot.credential else { return }
        let key = ObjectIdentifier(credential)
        switch freshness[key] ?? .fresh {
        case .fresh: freshness[key] = .recommended
        case .recommended, .needed: freshness[key] = .needed
        }
        note("\(name(credential)) aged to \(freshness[key]!)")
    }

    private mutating func adoptNew() {
        let credential = newCredential()
        apply(machine.adopt(credential, now: now), "adopt \(name(credential))")
    }

    private mutating func cancelOne() {
        // Sorted: a dictionary's order changes from process to process, and replays must not.
        let waiting = requests.values.filter { $0.answers == 0 && !$0.cancelled }.sorted { $0.ticket < $1.ticket }
        guard let request = waiting.randomElement(using: &random) else { return }
        if !machine.isWaiting(ticket: request.ticket) { failure = "unanswered request \(request.ticket) does not wait" }
        requests[request.ticket]?.cancelled = true
        let actions = machine.cancel(ticket: request.ticket, now: now)
        if actions.cancelled?.ticket != request.ticket {
            failure = "cancelling waiting request \(request.ticket) did not take it out of the machine"
        }
        apply(actions, "cancel \(request.ticket)")
        // A request cancelled before is no longer the machine's: it cannot be taken out again.
        let cancelled = requests.values.filter(\.cancelled).sorted { $0.ticket < $1.ticket }
        if let late = cancelled.randomElement(using: &random) {
            if machine.isWaiting(ticket: late.ticket) { failure = "cancelled request \(late.ticket) still waits" }
            let again = machine.cancel(ticket: late.ticket, now: now)
            if again.cancelled != nil { failure = "cancelled request \(late.ticket) was taken out again" }
            apply(again, "cancel \(late.ticket) again")
        }
    }

    private mutating func deliverAnswers() {
        guard delivery?.onPump == false else { return }
        advanceDelivery()
    }

    /// One step of the delivery, as the driver makes it: the machine is told just before the
    /// group's last completion (the pump may stop there), then asked for the next group once that
    /// completion has run.
    private mutating func advanceDelivery() {
        guard var current = delivery else { return }
        let who = current.onPump ? "pump" : "deliverer"
        if !current.told {
            current.told = true
            delivery = current
            if machine.answered(current.tickets.count, byPump: current.firstOfPump) {
                pumpScheduled = false
                pumpStops = true
                note("\(who): answers made, the pump stops with them")
            } else {
                note("\(who): answers made")
            }
            return
        }
        guard let next = machine.delivered().next else {
            if !deferredGroups.isEmpty { failure = "delivery ended with groups still deferred" }
            delivery = nil
            if current.onPump, pumpStops {
                pumpStops = false
                pumpRunning = false
            }
            note("\(who): delivery ended")
            return
        }
        let tickets = next.waiters.map(\.ticket)
        guard deferredGroups.first == tickets else {
            failure = "delivered \(tickets) next, but \(deferredGroups.first ?? []) was deferred first"
            return
        }
        deferredGroups.removeFirst()
        delivery = Delivery(tickets: tickets, onPump: current.onPump, firstOfPump: false, told: false)
        note("\(who): delivers the deferred \(tickets)")
    }

    // MARK: - Performing actions, as the driver does

    private mutating func apply(_ actions: Machine.Actions, _ label: String, byPump: Bool = false) {
        note(label)
        switch actions.queue {
        case .none: break
        case .suspend: suspended += 1
        case .resume: suspended -= 1
        }
        if suspended < 0 || suspended > 1 { failure = "queue suspension count \(suspended) after \(label)" }
        if actions.schedulePump {
            if pumpScheduled { failure = "a second pump was scheduled after \(label)" }
            pumpScheduled = true
        }
        if let answers = actions.answers {
            if delivery != nil { failure = "answers handed out while another group is being delivered (\(label))" }
            record(answers, label)
            delivery = Delivery(
                tickets: answers.waiters.map(\.ticket), onPump: byPump, firstOfPump: byPump, told: false)
        }
        if machine.handOut.delivery.deferred.count > deferredGroups.count {
            let group = machine.handOut.delivery.deferred[deferredGroups.count]
            if delivery == nil { failure = "answers deferred while no group is being delivered (\(label))" }
            record(group, label + ", deferred")
            deferredGroups.append(group.waiters.map(\.ticket))
        }
        if let start = actions.refresh {
            let running = refreshes.filter { !$0.abandoned }
            if !running.isEmpty {
                failure = "refresh \(start.attempt) started while \(running.map(\.attempt)) still runs"
            }
            if refreshes.contains(where: { !$0.abandoned && $0.credential === start.credential }) {
                failure = "a second refresh of the same credential started"
            }
            refreshes.append(RunningRefresh(attempt: start.attempt, credential: start.credential))
            note("  refresh \(start.attempt) of \(name(start.credential)) started")
            abandonTimers.append((start.attempt, start.abandonAt))
        }
        if let deadline = actions.waitTimer { waitTimers.append(deadline) }
    }

    private mutating func record(_ answers: Machine.Answers, _ label: String) {
        let held = machine.snapshot.credential
        for waiter in answers.waiters {
            guard var request = requests[waiter.ticket] else {
                failure = "answered unknown ticket \(waiter.ticket)"
                return
            }
            if request.cancelled {
                failure = "answered cancelled request \(waiter.ticket) after \(label)"
                return
            }
            request.answers += 1
            requests[waiter.ticket] = request
            if request.answers > 1 {
                failure = "request \(waiter.ticket) answered twice (after \(label))"
                return
            }
            if case .sign(let credential) = answers.outcome, credential === request.rejected {
                failure = "request \(waiter.ticket) signed again with the token the server rejected (a 401 loop)"
                return
            }
            if case .sign(let credential) = answers.outcome, let header = request.rejectedWhileUnheld,
                credential.signingHeader == header
            {
                failure = "request \(waiter.ticket) signed with a copy of the token the server rejected (a 401 loop)"
                return
            }
            if request.kind == .request {
                if let last = lastAnsweredRequestTicket, waiter.ticket < last {
                    failure = "request \(waiter.ticket) answered after request \(last): not in arrival order"
                    return
                }
                lastAnsweredRequestTicket = waiter.ticket
            }
        }
        if case .sign(let credential) = answers.outcome, credential !== held {
            failure = "signed with \(name(credential)) while \(held.map(name) ?? "nothing") was held (\(label))"
        }
        note("  answered \(answers.waiters.map(\.ticket)) with \(answers.outcome)")
    }

    // MARK: - Invariants

    private mutating func checkInvariants() {
        guard failure == nil else { return }
        let snapshot = machine.snapshot
        if snapshot.isHeld != (suspended == 1) {
            failure =
                "the queue is \(suspended == 1 ? "" : "not ")suspended, but the line is \(snapshot.isHeld ? "" : "not ")held"
        } else if snapshot.isHeld && snapshot.waiting == 0 {
            failure = "the queue is suspended while nobody waits"
        } else if snapshot.isHeld && snapshot.refreshAttempt == nil {
            failure = "the queue is suspended while no refresh runs"
        } else if snapshot.isMoving && snapshot.waiting > 0 && !snapshot.pumpPending {
            failure = "requests wait in a moving line with no pump to move it"
        } else if snapshot.pumpPending != pumpScheduled {
            failure = "the machine's pump (\(snapshot.pumpPending)) and the driver's (\(pumpScheduled)) disagree"
        } else if snapshot.unanswered != outstandingAnswers {
            failure = "\(snapshot.unanswered) answers outstanding, the driver has \(outstandingAnswers)"
        } else if snapshot.delivering != (delivery != nil) {
            failure = "the machine believes a group is \(snapshot.delivering ? "" : "not ")being delivered"
        } else if snapshot.deferred != deferredGroups.joined().count {
            failure = "the machine defers \(snapshot.deferred) answers, the driver \(deferredGroups.joined().count)"
        } else if let deadline = snapshot.earliestWaitDeadline, !waitTimers.contains(where: { $0 <= deadline + 1e-9 }) {
            failure = "a waiter must be answered by \(deadline) but no timer is armed by then"
        } else if refreshes.filter({ !$0.abandoned }).count > 1 {
            failure = "more than one refresh in flight"
        }
    }

    // MARK: - Credentials

    private mutating func newCredential(_ value: Freshness? = nil) -> HeldCredential {
        tokenCounter += 1
        let token = "token-\(tokenCounter)"
        let credential = HeldCredential(
            authentication: ModelAuthentication(accessToken: token), header: .success("Bearer " + token))
        freshness[ObjectIdentifier(credential)] =
            value ?? [.fresh, .fresh, .recommended, .needed][Int.random(in: 0..<4, using: &random)]
        credentials.append(credential)
        return credential
    }

    /// A new object with the token of a credential seen before: often the one last rejected.
    private mutating func copyOfCredential() -> HeldCredential {
        let original =
            Bool.random(using: &random)
            ? lastRejected ?? credentials[0]
            : credentials[Int.random(in: 0..<credentials.count, using: &random)]
        let token = name(original)
        let copy = HeldCredential(authentication: ModelAuthentication(accessToken: token), header: original.header)
        freshness[ObjectIdentifier(copy)] = freshness[ObjectIdentifier(original)]
        credentials.append(copy)
        return copy
    }

    private func name(_ credential: HeldCredential) -> String {
        (credential.authentication as? ModelAuthentication)?.accessToken ?? "?"
    }
}
