import Foundation

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the transition tests drive the machine with: named credentials, requests arriving at a
/// given time, and readable views of the actions an event returns.
enum MachineStep {
    typealias Machine = RefreshStateMachine

    /// An authentication whose freshness the machine never reads itself: the driver reports it.
    struct Token: RefreshableAuthentication {
        let accessToken: String
        var isRefreshNeeded: Bool { false }
        func refresh() -> Future<Token> { Future(value: self) }
        static func find() -> Token? { nil }
    }

    static func credential(_ name: String) -> HeldCredential {
        HeldCredential(authentication: Token(accessToken: name), header: .success("Bearer \(name)"))
    }

    /// A machine whose requests wait at most `refreshTimeout`, whose refreshes are given up after
    /// `abandonAfter`, with an unlimited refresh window unless one is given, and that fails a
    /// request when `find()` finds nothing unless told otherwise.
    static func machine(
        refreshTimeout: TimeInterval = 10, abandonAfter: TimeInterval = 40, window: RefreshWindow = .unlimited,
        missingAuthentication: MissingAuthenticationPolicy = .fail
    ) -> Machine {
        Machine(
            configuration: .init(
                refreshTimeout: refreshTimeout, abandonAfter: abandonAfter, window: window,
                missingAuthentication: missingAuthentication))
    }

    static let request = URLRequest(url: URL(string: "https://api.example.test/v1/me")!)

    /// A request arriving at `now`: its ticket and the actions.
    static func arrive(
        _ machine: inout Machine, at now: TimeInterval = 0, kind: Waiter.Kind = .request,
        rejectedHeader: String? = nil, staleGeneration: UInt64? = nil
    ) -> (ticket: UInt64, actions: Machine.Actions) {
        machine.arrive(
            request, completion: { _ in }, kind: kind, rejectedHeader: rejectedHeader,
            staleGeneration: staleGeneration, now: now)
    }

    /// A machine holding `name` (adopted), whose `waiting` requests arrived at 0 and wait for the
    /// refresh of it that the freshness read at 0 found needed: the attempt and the tickets.
    static func heldByRefresh(
        waiting: Int = 1, of name: String = "old", refreshTimeout: TimeInterval = 10, abandonAfter: TimeInterval = 40,
        window: RefreshWindow = .unlimited
    ) -> (machine: Machine, attempt: UInt64, tickets: [UInt64]) {
        var machine = Self.machine(refreshTimeout: refreshTimeout, abandonAfter: abandonAfter, window: window)
        _ = machine.adopt(credential(name), now: 0)
        let tickets = (0..<waiting).map { _ in arrive(&machine).ticket }
        guard case .evaluate(_, let generation, _) = machine.pump(now: 0) else { return (machine, 0, tickets) }
        let actions = machine.evaluated(generation: generation, freshness: .needed, now: 0)
        // The pump asks once more and stops: the line waits for the refresh.
        _ = machine.pump(now: 0)
        return (machine, actions.refresh?.attempt ?? 0, tickets)
    }

    /// Delivers the answers of `actions` as the driver does: the group is reported answered,
    /// then every group handed out meanwhile, until the machine has none left. Returns whether
    /// the pump stopped with the first group (`byPump`: the pump handed it out).
    @discardableResult
    static func deliver(_ actions: Machine.Actions, in machine: inout Machine, byPump: Bool = false) -> Bool {
        guard let answers = actions.answers else { return false }
        let stopped = machine.answered(answers.waiters.count, byPump: byPump)
        while let next = machine.delivered().next {
            machine.answered(next.waiters.count)
        }
        return stopped
    }

    /// The pump's next step, its answers delivered.
    static func pumpAndDeliver(_ machine: inout Machine, now: TimeInterval) -> Machine.PumpStep {
        let step = machine.pump(now: now)
        deliver(step.actions, in: &machine, byPump: true)
        return step
    }

    /// A failed refresh as the driver reports it.
    static func failure(
        _ error: any Error = URLError(.badServerResponse), isTransport: Bool = false, retryAfter: TimeInterval? = nil,
        requiresReauthentication: Bool = false
    ) -> Machine.RefreshResult {
        .failed(
            Machine.Failure(
                error: error, isTransport: isTransport, retryAfter: retryAfter,
                requiresReauthentication: requiresReauthentication))
    }
}

extension RefreshStateMachine.Actions {
    /// The events, as a log shows them.
    var eventTexts: [String] { events.map(\.description) }

    /// The tickets of the waiters answered, in the order given.
    var answeredTickets: [UInt64] { answers?.waiters.map(\.ticket) ?? [] }

    /// How the waiters are answered: `sign Bearer <token>`, `fail <error>` or `send unsigned`.
    var outcome: String? { answers.map { $0.outcome.text } }
}

extension RefreshStateMachine.Outcome {
    var text: String {
        switch self {
        case .sign(let credential): return "sign \(credential.signingHeader ?? "-")"
        case .fail(let error): return "fail \(error.name)"
        case .sendUnsigned: return "send unsigned"
        }
    }
}

extension RefreshStateMachine.PumpStep {
    /// Which step: `perform`, `find`, `evaluate <generation>` or `idle`.
    var text: String {
        switch self {
        case .perform: return "perform"
        case .find: return "find"
        case .evaluate(_, let generation, _): return "evaluate \(generation)"
        case .idle: return "idle"
        }
    }
}
