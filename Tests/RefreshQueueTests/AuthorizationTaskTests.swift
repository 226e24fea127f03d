import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The task `authorize` returns is a small value: copies stand for one request, it answers
/// `isCompleted` and `isCancelled` from the closure and from a record its waiting neighbours share,
/// and neither keeps the closure alive nor costs a waiting request an allocation of its own.
@Suite("AuthorizationTask", .timeLimit(.minutes(2)))
struct AuthorizationTaskTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    /// A closure whose first request started a refresh that is held: later requests wait.
    private static func waitingClosure() async -> (TokenService, Closure) {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        return (service, Closure.make(service))
    }

    @Test func aCopyCancelsTheSameRequestAndEveryCopySeesItCancelled() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        let task = closure.authorize(makeRequest()) { results.record(0, $0) }
        await service.started.wait(for: 1)
        #expect(!task.isCompleted && !task.isCancelled)
        let copy = task
        copy.cancel()
        #expect(task.isCancelled && task.isCompleted)
        #expect(results.results[0]?.refreshQueueError == .cancelled)
        task.cancel()
        service.completePending()
        // A request sent after the refresh is signed at once: the cancelled one was never answered again.
        let signed = await withCheckedContinuation { continuation in
            closure.authorize(makeRequest()) { continuation.resume(returning: $0) }
        }
        #expect(signed.authorization == "Bearer token-1")
        #expect(results.count == 1 && results.duplicates.isEmpty)
    }

    @Test func aTaskIsCompletedOnceItsRequestIsAnsweredAndCancellingItThenDoesNothing() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        let task = closure.authorize(makeRequest()) { results.record(0, $0) }
        await service.started.wait(for: 1)
        #expect(!task.isCompleted)
        service.completePending()
        await results.wait(for: 1)
        #expect(task.isCompleted && !task.isCancelled)
        task.cancel()
        #expect(!task.isCancelled)
        #expect(results.results[0]?.authorization == "Bearer token-1")
        #expect(results.duplicates.isEmpty)
    }

    @Test func aRequestSignedWithoutWaitingGivesACompletedTask() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        let results = Results()
        let task = closure.authorize(makeRequest()) { results.record(0, $0) }
        #expect(task.isCompleted && !task.isCancelled)
        task.cancel()
        #expect(!task.isCancelled && results.count == 1)
        #expect(results.results[0]?.authorization == "Bearer valid")
    }

    @Test func aTaskKeptAfterTheClosureIsReleasedDoesNotKeepItAndStillTellsWhatHappened() async {
        weak var released: Closure?
        var tasks: [AuthorizationTask] = []
        let results = Results()
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        do {
            let closure = Closure.make(service)
            released = closure
            tasks.append(closure.authorize(makeRequest()) { results.record(0, $0) })
            tasks.append(closure.authorize(makeRequest()) { results.record(1, $0) })
            await service.started.wait(for: 1)
            tasks[0].cancel()
        }
        service.completePending()
        await results.wait(for: 2)
        // The refresh's end is the last thing that held the closure; it lets go right after answering.
        for _ in 0..<1_000 where released != nil {
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(released == nil, "the tasks kept the closure alive")
        #expect(tasks[0].isCancelled && tasks[0].isCompleted)
        #expect(!tasks[1].isCancelled && tasks[1].isCompleted)
        tasks[1].cancel()
        #expect(!tasks[1].isCancelled)
        #expect(results.results[1]?.authorization == "Bearer token-1")
        #expect(results.duplicates.isEmpty)
    }

    @Test func waitingRequestsShareOneRecordUntilACancellationAndEachTellsItsOwnFate() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        let before = (0..<3).map { index in closure.authorize(makeRequest()) { results.record(index, $0) } }
        await service.started.wait(for: 1)
        #expect(before.allSatisfy { $0.ledger != nil && $0.ledger === before[0].ledger })
        before[1].cancel()
        let after = (3..<6).map { index in closure.authorize(makeRequest()) { results.record(index, $0) } }
        // Requests that arrive after a cancellation start a new record; the old one stays with its tasks.
        #expect(after.allSatisfy { $0.ledger != nil && $0.ledger === after[0].ledger })
        #expect(after[0].ledger !== before[0].ledger)
        after[2].cancel()
        before[0].cancel()
        #expect(before.map(\.isCancelled) == [true, true, false])
        #expect(after.map(\.isCancelled) == [false, false, true])
        service.completePending()
        await results.wait(for: 6)
        #expect([2, 3, 4].allSatisfy { results.results[$0]?.authorization == "Bearer token-1" })
        #expect([0, 1, 5].allSatisfy { results.results[$0]?.refreshQueueError == .cancelled })
        #expect(results.duplicates.isEmpty)
    }

    @Test func aRecordOfCancellationsIsFreedWithTheLastTaskThatSharesIt() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        weak var record: CancellationLedger?
        do {
            let tasks = (0..<100).map { index in closure.authorize(makeRequest()) { results.record(index, $0) } }
            await service.started.wait(for: 1)
            record = tasks[0].ledger
            for task in tasks.prefix(50) { task.cancel() }
            #expect(tasks.prefix(50).allSatisfy(\.isCancelled) && !tasks.suffix(50).contains(where: \.isCancelled))
        }
        #expect(record == nil, "the cancellations are kept after every task that could ask was let go of")
        service.completePending()
        await results.wait(for: 100)
        #expect(results.duplicates.isEmpty)
    }

    @Test func thousandsOfConcurrentCancellationsEachCompleteTheirRequestOnce() async {
        let (service, closure) = await Self.waitingClosure()
        let results = Results()
        let count = 4_000
        let tasks = Protected([Int: AuthorizationTask]())
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let task = closure.authorize(makeRequest()) { results.record(index, $0) }
            tasks.withLock { $0[index] = task }
        }
        await service.started.wait(for: 1)
        let all = tasks.withLock { $0 }
        // Every even request is cancelled twice, from two threads at once.
        DispatchQueue.concurrentPerform(iterations: count) { index in
            all[index / 2 * 2]?.cancel()
        }
        service.completePending()
        await results.wait(for: count)
        #expect(results.duplicates.isEmpty)
        for index in 0..<count {
            let cancelled = index.isMultiple(of: 2)
            #expect(all[index]?.isCancelled == cancelled)
            #expect(all[index]?.isCompleted == true)
            #expect((results.results[index]?.refreshQueueError == .cancelled) == cancelled)
        }
    }
}
