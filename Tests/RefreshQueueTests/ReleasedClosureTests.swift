import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Waiting requests do not keep their closure alive themselves: a running refresh or a scheduled
/// pump does, while anything waits. A closure the app lets go of while requests wait behind a
/// blocked `find()`, a refresh ahead that is abandoned, or a refresh that `invalidate()` left
/// running still answers every one of them, once.
@Suite("A closure released while requests wait", .timeLimit(.minutes(2)))
struct ReleasedClosureTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func releasedWhileRequestsWaitBehindABlockedFind() async {
        let gate = DispatchSemaphore(value: 0)
        let entered = Completions<Bool>()
        let service = TokenService()
        service.store(service.authentication("valid"))
        let results = Results()
        weak var weakClosure: Closure?
        do {
            let find = service.find
            let closure = Closure(
                options: .init(refreshTimeout: 60),
                find: {
                    entered.record(0, true)
                    gate.wait()
                    return find()
                })
            weakClosure = closure
            for index in 0..<100 { closure.authorize(makeRequest()) { results.record(index, $0) } }
            await entered.wait(for: 1)
        }
        gate.signal()
        await results.wait(for: 100)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer valid" })
        #expect(results.duplicates.isEmpty)
        _ = weakClosure
    }

    @Test func releasedWhileProbesAndRequestsWaitForAnAbandonedRefresh() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("soon", recommended: true))
        let results = Results()
        let probes = Completions<Result<Void, any Error>>()
        do {
            let closure = Closure.make(service, refreshTimeout: 0.3, abandonAfter: 0.3)
            // Load, then a probe starts a refresh ahead and waits beside the line.
            _ = try? await closure.authorize(makeRequest())
            closure.refreshIfNeeded { probes.record(0, $0) }
            await service.started.wait(for: 1)
            closure.refreshIfNeeded { probes.record(1, $0) }
            closure.invalidate()
            for index in 0..<20 { closure.authorize(makeRequest()) { results.record(index, $0) } }
        }
        await probes.wait(for: 2)
        await results.wait(for: 20)
        #expect(probes.duplicates.isEmpty && results.duplicates.isEmpty)
        service.completePending()
    }

    @Test func releasedWhileRequestsWaitAfterAnInvalidateDuringTheRefresh() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let results = Results()
        do {
            let closure = Closure.make(service, refreshTimeout: 2)
            for index in 0..<50 { closure.authorize(makeRequest()) { results.record(index, $0) } }
            await service.started.wait(for: 1)
            closure.invalidate()
            for index in 50..<100 { closure.authorize(makeRequest()) { results.record(index, $0) } }
        }
        service.completePending()
        await results.wait(for: 100)
        #expect(results.duplicates.isEmpty)
    }
}
