import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `cancelAll()` answers everyone waiting at once, each once; the refresh in flight runs on.
@Suite("Cancelling every waiting request", .timeLimit(.minutes(1)))
struct CancelAllTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    /// A closure whose first request started a refresh that never ends by itself.
    private static func waitingClosure(events: EventLog? = nil) async -> (TokenService, Closure) {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        return (service, Closure.make(service, events: events))
    }

    @Test func aHundredRequestsWaitingOnAHungRefreshAreAnsweredAtOnceEachOnce() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        closure.authorizeConcurrently(100, into: results)
        await service.started.wait(for: 1)
        #expect(results.count == 0)
        closure.cancelAll()
        // Answered on this thread before cancelAll() returned, or by the deliverer at once.
        #expect(await results.wait(for: 100, timeout: 1))
        #expect(results.duplicates.isEmpty)
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .cancelled })
        #expect(service.refreshCount == 1)
        // After a login, the closure signs again.
        closure.adopt(service.authentication("logged-in"))
        let signed = await withCheckedContinuation { continuation in
            closure.authorize(makeRequest()) { continuation.resume(returning: $0) }
        }
        #expect(signed.authorization == "Bearer logged-in")
        #expect(results.duplicates.isEmpty && results.count == 100)
    }

    @Test func theRefreshInFlightRunsOnAndItsResultIsAdopted() async {
        let (service, closure) = await Self.waitingClosure()
        let first = Results()
        closure.authorizeConcurrently(3, into: first)
        await service.started.wait(for: 1)
        closure.cancelAll()
        #expect(await first.wait(for: 3, timeout: 1))
        // A request made now waits for the same refresh, which then signs it: no second refresh.
        let later = Results()
        closure.authorize(makeRequest()) { later.record(0, $0) }
        #expect(later.count == 0)
        service.completePending()
        #expect(await later.wait(for: 1))
        #expect(later.results[0]?.authorization == "Bearer token-1")
        #expect(service.refreshCount == 1)
        #expect(first.results.values.allSatisfy { $0.refreshQueueError == .cancelled })
    }

    @Test func refreshIfNeededCallersAreCancelledToo() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("ahead", recommended: true))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        let probe = Protected<Result<Void, any Error>?>(nil)
        closure.refreshIfNeeded { result in probe.withLock { $0 = result } }
        await service.started.wait(for: 1)
        #expect(probe.current == nil)
        closure.cancelAll()
        #expect(uptimeWhen(timeout: 1) { probe.current != nil } != nil)
        #expect(throws: RefreshQueueError.cancelled) { try probe.current?.get() }
    }

    @Test func anAsyncCallerThrowsCancellationError() async {
        let (service, closure) = await Self.waitingClosure()
        let waiting = Task { try await closure.authorize(makeRequest()) }
        // Its own request started the refresh: it waits in line.
        await service.started.wait(for: 1)
        closure.cancelAll()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func withNobodyWaitingItDoesNothing() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure.make(service)
        closure.cancelAll()
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer valid")
        #expect(service.refreshCount == 0)
    }

    @Test func requestsAlreadyHandedTheirAnswerKeepIt() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        // The first completion blocks its deliverer, so the second waits, handed out, behind it.
        closure.authorize(makeRequest()) { result in
            results.record(0, result)
            entered.signal()
            release.wait()
        }
        closure.authorize(makeRequest()) { results.record(1, $0) }
        await service.started.wait(for: 1)
        DispatchQueue.global().async { service.completePending() }
        entered.wait()
        closure.cancelAll()
        release.signal()
        #expect(await results.wait(for: 2))
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer token-1" })
        #expect(results.duplicates.isEmpty)
    }
}
