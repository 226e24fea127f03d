import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A group of waiting requests is answered one completion after another, so a request can leave
/// the line long before its completion runs (behind a slow completion of its group). Until then,
/// cancelling it still completes it at once with `cancelled`: the time limit of `authorizeRedirect`
/// (on Linux, a late redirect decision stops the process) and the promise that a cancelled `async`
/// wait stops at once rest on that.
@Suite("Cancelling a request handed out to be answered", .timeLimit(.minutes(5)))
struct HandedOutCancellationTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    /// Two requests wait for a held refresh; the first one's completion blocks (slow user code)
    /// until the returned gate is signalled. Returns once that completion runs: the second request
    /// has then been handed out with it, and its completion has not run.
    private static func blockedDelivery(
        waiting: Int = 1, _ second: (Closure) -> Void
    ) async -> (closure: Closure, gate: DispatchSemaphore, first: Results) {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = Closure.make(service, events: events)
        let gate = DispatchSemaphore(value: 0)
        let first = Results()
        closure.authorize(makeRequest("/first")) { result in
            first.record(0, result)
            gate.wait()
        }
        await service.started.wait(for: 1)
        second(closure)
        // The second request (or `waiting` requests) waits in line behind the first before the
        // refresh completes.
        await events.wait(forEventStartingWith: "request waiting", count: 1 + waiting)
        service.completePending()
        await first.wait(for: 1)
        return (closure, gate, first)
    }

    @Test func cancellingARequestWhoseCompletionHasNotRunCompletesItAtOnce() async {
        let results = Results()
        let task = Protected<AuthorizationTask?>(nil)
        let (_, gate, _) = await Self.blockedDelivery { closure in
            task.withLock { $0 = closure.authorize(makeRequest("/second")) { results.record(1, $0) } }
        }
        defer { gate.signal() }
        let second = task.current!
        #expect(results.count == 0, "the second completion ran before the first returned")
        second.cancel()
        // Completed at once, on this thread, with `cancelled`.
        #expect(second.isCancelled, "cancel() did nothing: the request had been handed out")
        #expect(results.results[1]?.refreshQueueError == .cancelled)
        gate.signal()
        await results.wait(for: 1)
        #expect(results.duplicates.isEmpty)
        #expect(results.results[1]?.authorization == nil, "a cancelled request was signed")
    }

    /// Cancellations find their request in a group of thousands (by binary search, the group
    /// being in arrival order), each completes its own request and no other, and the deliverer
    /// skips exactly those.
    @Test(.exclusive) func cancellingHalfOfALargeGroupBeingDeliveredCompletesEachCancelledRequestOnce() async {
        let count = 3_000
        let results = Results()
        let tasks = Protected<[AuthorizationTask]>([])
        let (_, gate, _) = await Self.blockedDelivery(waiting: count) { closure in
            for index in 1...count {
                let task = closure.authorize(makeRequest("/\(index)")) { results.record(index, $0) }
                tasks.withLock { $0.append(task) }
            }
        }
        defer { gate.signal() }
        let all = tasks.current
        // Every other request, the last one first, from several threads at once.
        let cancelled = Set(stride(from: count, through: 1, by: -2))
        let order = cancelled.sorted(by: >)
        DispatchQueue.concurrentPerform(iterations: order.count) { all[order[$0] - 1].cancel() }
        #expect(results.count == cancelled.count, "cancelled requests not completed at once")
        let misreported = (1...count).filter { all[$0 - 1].isCancelled != cancelled.contains($0) }
        #expect(misreported.count == 0, "isCancelled wrong for requests \(misreported.prefix(10))")
        gate.signal()
        await results.wait(for: count)
        #expect(results.duplicates.isEmpty)
        let wrong = (1...count).filter { index in
            let result = results.results[index]
            return cancelled.contains(index)
                ? result?.refreshQueueError != .cancelled : result?.authorization == nil
        }
        #expect(wrong.count == 0, "requests completed the wrong way: \(wrong.prefix(10))")
    }

    @Test func aRedirectDecisionArrivesWithinItsTimeLimitEvenBehindASlowCompletion() async {
        let decision = Completions<URLRequest?>()
        let (_, gate, _) = await Self.blockedDelivery { closure in
            let response = HTTPURLResponse(
                url: URL(string: "https://api.example.test/v1/me")!, statusCode: 302, httpVersion: nil,
                headerFields: ["Location": "/v1/next"])!
            closure.authorizeRedirect(
                makeRequest("/v1/next"), answering: response, originalRequest: nil, waitingAtMost: 1
            ) { decision.record(0, $0) }
        }
        defer { gate.signal() }
        // The limit is 1 s: a decision (nil, "do not follow") is due then. On Linux, URLSession stops
        // the process when a decision comes after the request timeout this limit protects.
        let inTime = await decision.wait(for: 1, timeout: 15)
        #expect(inTime, "no redirect decision 15 s after a 1 s limit")
        gate.signal()
        await decision.wait(for: 1)
    }

    @Test func cancellingTheSwiftTaskOfAWaitingAsyncRequestThrowsAtOnce() async {
        let outcome = Completions<String>()
        let call = Protected<Task<Void, Never>?>(nil)
        let (_, gate, _) = await Self.blockedDelivery { closure in
            call.withLock {
                $0 = Task {
                    do {
                        let signed = try await closure.authorize(makeRequest("/second"))
                        outcome.record(0, "signed \(signed.value(forHTTPHeaderField: "Authorization") ?? "-")")
                    } catch {
                        outcome.record(0, "threw \(type(of: error))")
                    }
                }
            }
        }
        defer { gate.signal() }
        #expect(outcome.count == 0)
        call.current?.cancel()
        let stopped = await outcome.wait(for: 1, timeout: 15)
        #expect(stopped, "a cancelled task still waits 15 s later")
        gate.signal()
        await outcome.wait(for: 1)
        #expect(outcome.results[0] == "threw CancellationError")
    }
}
