import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The refresh state machine alone, timed, for the `Benchmarks` executable: what the decisions
/// cost per request, without locks, queues or user code around them. Not part of the API: visible
/// only inside this package.
package enum StateMachineWorkload {
    /// How the requests of a workload meet the machine.
    package enum Shape: Sendable {
        /// Held by a refresh: the first request finds the token stale, the others join the
        /// refresh, it ends, the line is released and answered.
        case heldByARefresh
        /// Through the line with a fresh token: the requests arrive while a pump is pending, the
        /// pump reads the token once and answers them all.
        case throughTheLine
    }

    /// Nanoseconds of machine time per request for `requests` requests of `shape`, every event
    /// included (arrival, hold, refresh end, pump steps, answers delivered).
    package static func nanosecondsPerRequest(_ shape: Shape, requests: Int) -> Double {
        let count = max(1, requests)
        let request = URLRequest(url: URL(fileURLWithPath: "/"))
        let completion: AuthorizationTask.Completion = { _ in }
        var machine = RefreshStateMachine(
            configuration: .init(refreshTimeout: 30, abandonAfter: 120, window: .unlimited))
        let stale = HeldCredential(authentication: Token(), header: .success("Bearer stale"))
        let fresh = HeldCredential(authentication: Token(), header: .success("Bearer fresh"))
        var sink = 0
        // Requests answered, counted apart from `sink`: every arrival alone adds an event to
        // `sink`, so `sink` cannot tell whether the pump answered them all.
        var answered = 0
        let start = DispatchTime.now().uptimeNanoseconds
        switch shape {
        case .heldByARefresh:
            sink += machine.adopt(stale, now: 0).events.count
            for index in 0..<count {
                let (_, actions) = machine.arrive(
                    request, completion: completion, staleGeneration: index == 0 ? 1 : nil, now: 1)
                sink += actions.events.count
            }
            sink += machine.refreshEnded(attempt: 1, .refreshed(fresh, .fresh), now: 2).events.count
        case .throughTheLine:
            for index in 0..<count {
                let (_, actions) = machine.arrive(request, completion: completion, now: 1)
                sink += actions.events.count + index
            }
        }
        // The pump: load or read freshness, answer, until idle.
        pumping: while true {
            switch machine.pump(now: 3) {
            case .perform(let actions):
                if let answers = actions.answers, deliver(answers, by: &machine, into: &sink, answered: &answered) {
                    break pumping
                }
            case .find:
                sink += machine.found(fresh, now: 3).events.count
            case .evaluate(_, let generation, _):
                let actions = machine.evaluated(generation: generation, freshness: .fresh, now: 3)
                if let answers = actions.answers, deliver(answers, by: &machine, into: &sink, answered: &answered) {
                    break pumping
                }
            case .idle:
                break pumping
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        precondition(answered == count, "every request must have been answered, once")
        precondition(sink >= count, "every request must have produced events")
        return elapsed / Double(count)
    }

    /// Delivers `answers` as the driver does: tells the machine, then asks for the next group
    /// handed out meanwhile, until none is left. Returns whether the pump stopped with the first.
    private static func deliver(
        _ answers: RefreshStateMachine.Answers, by machine: inout RefreshStateMachine, into sink: inout Int,
        answered: inout Int
    ) -> Bool {
        sink += answers.waiters.count
        answered += answers.waiters.count
        let stopped = machine.answered(answers.waiters.count, byPump: true)
        while let next = machine.delivered().next {
            sink += next.waiters.count
            answered += next.waiters.count
            machine.answered(next.waiters.count)
        }
        return stopped
    }

    /// A token the workload never refreshes.
    private struct Token: RefreshableAuthentication {
        var isRefreshNeeded: Bool { false }
        var accessToken: String { "token" }
        func refresh() -> Future<Token> { Future(value: self) }
        static func find() -> Token? { nil }
    }
}
