import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

@Suite("Future", .timeLimit(.minutes(5)))
struct FutureTests {
    @Test func theBodyRunsAtOnceOnTheCallersThread() {
        let ran = Protected(false)
        _ = Future<Int> { _ in ran.withLock { $0 = true } }
        #expect(ran.current)
    }

    @Test func theFirstCompletionWinsAndLaterOnesAreIgnored() throws {
        let future = Future<Int> { complete in
            complete(.success(1))
            complete(.success(2))
            complete(.failure(ExampleError(code: 3)))
        }
        #expect(try future.result?.get() == 1)
    }

    @Test func anObserverOfACompletedFutureRunsAtOnceExactlyOnce() {
        let calls = Protected(0)
        Future(value: 7).observe { result in
            #expect((try? result.get()) == 7)
            calls.withLock { $0 += 1 }
        }
        #expect(calls.current == 1)
    }

    @Test func everyObserverRunsExactlyOnceWhenCompletedFromManyThreadsAtOnce() async {
        let completer = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let future = Future<Int> { complete in completer.withLock { $0 = complete } }
        let calls = Protected([Int](repeating: 0, count: 100))
        for index in 0..<100 {
            future.observe { _ in calls.withLock { $0[index] += 1 } }
        }
        let complete = completer.current!
        DispatchQueue.concurrentPerform(iterations: 64) { attempt in
            complete(.success(attempt))
        }
        #expect(calls.current.allSatisfy { $0 == 1 })
        let winner = try? future.result?.get()
        #expect(winner != nil)
        let late = Completions<Int>()
        future.observe { late.record(0, try! $0.get()) }
        #expect(late.results[0] == winner)
    }

    @Test func anObserverGivenAQueueRunsOnThatQueue() async {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "observer")
        queue.setSpecific(key: key, value: "observer")
        let seen = Completions<String?>()
        Future(value: 1).observe(on: queue) { _ in seen.record(0, DispatchQueue.getSpecific(key: key)) }
        await seen.wait(for: 1)
        #expect(seen.results[0] == "observer")
    }

    @Test func anObserverWithoutAQueueRunsOnTheCompletingThread() async {
        let key = DispatchSpecificKey<String>()
        let completingQueue = DispatchQueue(label: "completer")
        completingQueue.setSpecific(key: key, value: "completer")
        let seen = Completions<String?>()
        let future = Future<Int> { complete in
            completingQueue.asyncAfter(deadline: .now() + 0.05) { complete(.success(1)) }
        }
        future.observe { _ in seen.record(0, DispatchQueue.getSpecific(key: key)) }
        await seen.wait(for: 1)
        #expect(seen.results[0] == "completer")
    }

    @Test func mapTransformsTheValueAndAThrownErrorFailsTheResult() throws {
        #expect(try Future(value: 2).map { $0 * 10 }.result?.get() == 20)
        let failed = Future(value: 2).map { _ -> Int in throw ExampleError(code: 1) }
        #expect(throws: ExampleError(code: 1)) { try failed.result?.get() }
    }

    @Test func errorsSkipMapAndFlatMapStages() throws {
        let calls = Protected(0)
        let future = Future<Int>(error: ExampleError(code: 9))
            .map { value -> Int in
                calls.withLock { $0 += 1 }
                return value
            }
            .flatMap { value -> Future<Int> in
                calls.withLock { $0 += 1 }
                return Future(value: value)
            }
        #expect(calls.current == 0)
        #expect(throws: ExampleError(code: 9)) { try future.result?.get() }
    }

    @Test func flatMapWaitsForTheFutureItsTransformReturns() async throws {
        let future = Future(value: 3).flatMap { value in
            Future<String> { complete in
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { complete(.success("v\(value)")) }
            }
        }
        #expect(try await future.value == "v3")
    }

    @Test func mapErrorRecoverAndFlatMapErrorHandleErrorsAndPassValues() throws {
        let failing = Future<Int>(error: ExampleError(code: 1))
        #expect(throws: ExampleError(code: 2)) {
            try failing.mapError { _ in ExampleError(code: 2) }.result?.get()
        }
        #expect(try failing.recover { _ in 5 }.result?.get() == 5)
        #expect(try failing.flatMapError { _ in Future(value: 6) }.result?.get() == 6)
        #expect(throws: ExampleError(code: 4)) {
            try failing.recover { _ in throw ExampleError(code: 4) }.result?.get()
        }
        let succeeding = Future(value: 1)
        #expect(try succeeding.mapError { _ in ExampleError(code: 2) }.result?.get() == 1)
        #expect(try succeeding.recover { _ in 5 }.result?.get() == 1)
        #expect(try succeeding.flatMapError { _ in Future(value: 6) }.result?.get() == 1)
    }

    @Test(.exclusive) func aChainOfOneHundredThousandMapStagesCompletesWithoutOverflowingTheStack() async throws {
        let completer = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        var future = Future<Int> { complete in completer.withLock { $0 = complete } }
        for _ in 0..<100_000 {
            future = future.map { $0 + 1 }
        }
        // Complete on a secondary thread, whose stack is smaller than the main thread's.
        let complete = completer.current!
        Thread.detachNewThread { complete(.success(0)) }
        #expect(try await future.value == 100_000)
    }

    @Test(.exclusive) func aChainOfOneHundredThousandFlatMapStagesCompletesWithoutOverflowingTheStack() async throws {
        let completer = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        var future = Future<Int> { complete in completer.withLock { $0 = complete } }
        for index in 0..<100_000 {
            if index.isMultiple(of: 2) {
                future = future.flatMap { Future(value: $0 + 1) }
            } else {
                future = future.flatMap { value in Future { complete in complete(.success(value + 1)) } }
            }
        }
        let complete = completer.current!
        Thread.detachNewThread { complete(.success(0)) }
        #expect(try await future.value == 100_000)
    }

    @Test(.exclusive) func aChainOfOneHundredThousandStagesOnACompletedFutureAlsoWorks() throws {
        var future = Future(value: 0)
        for _ in 0..<100_000 {
            future = future.flatMap { Future(value: $0 + 1) }
        }
        #expect(try future.result?.get() == 100_000)
    }

    @Test func valueBridgesToAsyncAwaitAndThrowsTheError() async throws {
        let future = Future<Int> { complete in
            DispatchQueue.global().async { complete(.success(42)) }
        }
        #expect(try await future.value == 42)
        await #expect(throws: ExampleError(code: 5)) {
            try await Future<Int>(error: ExampleError(code: 5)).value
        }
    }

    @Test func initOperationBridgesFromAsyncAwait() async throws {
        let future = Future<Int>(operation: {
            await Task.yield()
            return 8
        })
        #expect(try await future.value == 8)
        let failing = Future<Int>(operation: { throw ExampleError(code: 6) })
        await #expect(throws: ExampleError(code: 6)) { try await failing.value }
    }

    @Test func timeoutFailsAFutureThatDoesNotCompleteInTime() async {
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let never = Future<Int> { complete in kept.withLock { $0 = complete } }
        await #expect(throws: ExampleError(code: 7)) {
            try await never.timeout(after: 0.05, error: ExampleError(code: 7)).value
        }
        await #expect(throws: FutureError.timedOut) {
            try await never.timeout(after: 0.01).value
        }
    }

    @Test func timeoutReachesAnObserverEvenWhenNobodyKeepsTheFutures() async {
        let completions = Completions<Bool>()
        // Neither the source (only its `complete` is kept, as pending work would) nor the timed
        // future is kept here: only the observer cares, and it must still hear the timeout.
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        Future<Int> { complete in kept.withLock { $0 = complete } }
            .timeout(after: 0.05, error: ExampleError(code: 9)).observe { result in
                guard case .failure(let error) = result else { return completions.record(0, false) }
                completions.record(0, error as? ExampleError == ExampleError(code: 9))
            }
        await completions.wait(for: 1)
        #expect(completions.results[0] == true)
    }

    @Test func timeoutPassesAResultThatArrivesInTime() async throws {
        let soon = Future<Int> { complete in
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { complete(.success(3)) }
        }
        #expect(try await soon.timeout(after: 30).value == 3)
        #expect(try await Future(value: 4).timeout(after: 0).value == 4)
    }

    @Test func allCollectsValuesInOrderAndFailsOnTheFirstError() async throws {
        let futures = (0..<50).map { index in
            Future<Int> { complete in
                // check-apple: 32-bit safe (index is in 0..<50)
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50 - index)) {
                    complete(.success(index))
                }
            }
        }
        #expect(try await Future.all(futures).value == Array(0..<50))
        #expect(try await Future<Int>.all([]).value == [])
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let never = Future<Int> { complete in kept.withLock { $0 = complete } }
        await #expect(throws: ExampleError(code: 8)) {
            try await Future.all([never, Future(error: ExampleError(code: 8))]).value
        }
    }
}

extension FutureTests {
    /// `all` of no future has nothing to wait for: it is complete when returned, so an observer
    /// runs at once, on the caller's thread.
    @Test func allOfNoFutureIsCompleteWithAnEmptyArrayWhenReturned() {
        let received = Protected<[Int]?>(nil)
        Future<Int>.all([]).observe { result in received.withLock { $0 = try? result.get() } }
        #expect(received.current == [])
    }
}

@Suite("Future abandoned", .timeLimit(.minutes(5)))
struct FutureAbandonedTests {
    typealias Complete = @Sendable (Result<Int, any Error>) -> Void

    @Test func aFutureWhoseBodyDropsCompleteFailsAtOnceAsAbandoned() {
        let future = Future<Int> { _ in }
        let seen = Protected<[Bool]>([])
        future.observe { result in
            guard case .failure(let error) = result else { return seen.withLock { $0.append(false) } }
            seen.withLock { $0.append((error as? FutureError) == .abandoned) }
        }
        #expect(seen.current == [true])
    }

    @Test func droppingTheLastCopyOfCompleteLaterFailsEveryObserverAndStageOnce() async {
        let kept = Protected<Complete?>(nil)
        let results = Completions<Bool>()
        do {
            let head = Future<Int> { complete in kept.withLock { $0 = complete } }
            head.observe { results.record(0, (try? $0.get()) == nil) }
            head.map { $0 + 1 }.flatMap { Future(value: $0 * 2) }.observe { result in
                guard case .failure(let error) = result else { return results.record(1, false) }
                results.record(1, (error as? FutureError) == .abandoned)
            }
        }
        #expect(results.count == 0)
        // The pending work is dropped without completing its future.
        kept.withLock { $0 = nil }
        #expect(results.count == 2)
        #expect(results.results[0] == true && results.results[1] == true)
        #expect(results.duplicates.isEmpty)
    }

    @Test func aCompletedFutureIsNotFailedWhenItsCompleteIsDropped() throws {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in
            complete(.success(1))
            kept.withLock { $0 = complete }
        }
        kept.withLock { $0 = nil }
        #expect(try future.result?.get() == 1)
    }

    @Test func timeoutReportsAnAbandonedSourceAtOnceNotAfterItsTimer() async {
        let kept = Protected<Complete?>(nil)
        let timed = Future<Int> { complete in kept.withLock { $0 = complete } }.timeout(after: 60)
        kept.withLock { $0 = nil }
        guard case .failure(let error) = timed.result else {
            Issue.record("expected the timed future to have failed at once")
            return
        }
        #expect((error as? FutureError) == .abandoned)
    }

    /// The documented order: a future abandoned inside a callback fails on the same thread just
    /// after that callback returns, once, whether the callback's own future completed or was
    /// abandoned.
    @Test(arguments: [true, false])
    func aFutureAbandonedInsideACallbackFailsOnceOnThatThreadJustAfterItReturns(outerAbandoned: Bool) {
        let keptOuter = Protected<Complete?>(nil)
        let keptInner = Protected<Complete?>(nil)
        let outer = Future<Int> { complete in keptOuter.withLock { $0 = complete } }
        let inner = Future<Int> { complete in keptInner.withLock { $0 = complete } }
        let innerFailures = Protected(0)
        inner.observe { result in
            if case .failure(let error) = result, (error as? FutureError) == .abandoned {
                innerFailures.withLock { $0 += 1 }
            }
        }
        let seenInsideCallback = Protected<Int?>(nil)
        outer.observe { _ in
            keptInner.withLock { $0 = nil }
            seenInsideCallback.withLock { $0 = innerFailures.current }
        }
        if outerAbandoned {
            keptOuter.withLock { $0 = nil }
        } else {
            keptOuter.current?(.success(1))
        }
        #expect(seenInsideCallback.current == 0)
        #expect(innerFailures.current == 1)
    }

    /// "Just after that callback returns": before the next callback of the future being reported,
    /// and in the order the futures were abandoned (they ran after every remaining callback of
    /// that future, the last abandoned first).
    @Test func futuresAbandonedInsideACallbackOfAnAbandonedFutureFailInOrderBeforeItsNextCallback() {
        let keptOuter = Protected<Complete?>(nil)
        let keptFirst = Protected<Complete?>(nil)
        let keptSecond = Protected<Complete?>(nil)
        let outer = Future<Int> { complete in keptOuter.withLock { $0 = complete } }
        let first = Future<Int> { complete in keptFirst.withLock { $0 = complete } }
        let second = Future<Int> { complete in keptSecond.withLock { $0 = complete } }
        let log = Protected<[String]>([])
        first.observe { _ in log.withLock { $0.append("first") } }
        // A stage of the first, and an observer of that stage: what the first's failure reaches.
        first.map { $0 + 1 }.observe { _ in log.withLock { $0.append("first's stage") } }
        second.observe { _ in log.withLock { $0.append("second") } }
        outer.observe { _ in
            keptFirst.withLock { $0 = nil }
            keptSecond.withLock { $0 = nil }
            log.withLock { $0.append("outer 1") }
        }
        outer.observe { _ in log.withLock { $0.append("outer 2") } }
        keptOuter.withLock { $0 = nil }
        #expect(log.current == ["outer 1", "first", "first's stage", "second", "outer 2"])
    }

    @Test func anAsyncWaiterOfAnAbandonedFutureThrowsInsteadOfWaitingForever() async {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in kept.withLock { $0 = complete } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { kept.withLock { $0 = nil } }
        // Awaited in a task of its own, so that a waiter left hanging fails this test, not the run.
        let outcome = Completions<Bool>()
        Task {
            do {
                _ = try await future.value
                outcome.record(0, false)
            } catch {
                outcome.record(0, (error as? FutureError) == .abandoned)
            }
        }
        await outcome.wait(for: 1, timeout: 30)
        #expect(outcome.results[0] == true)
    }
}

@Suite("Future memory", .timeLimit(.minutes(5)))
struct FutureMemoryTests {
    @Test(.exclusive) func abandoningAPendingChainOfOneHundredThousandStagesFailsItWithoutOverflowingTheStack() async {
        let failed = await Self.abandoningAChainFailsItsTail { future, _ in future.map { $0 + 1 } }
        #expect(failed)
    }

    @Test(.exclusive) func abandoningAPendingChainOfOneHundredThousandFlatMapStagesFailsItWithoutOverflowingTheStack()
        async
    {
        let failed = await Self.abandoningAChainFailsItsTail { future, index in
            if index.isMultiple(of: 2) {
                return future.flatMap { Future(value: $0 + 1) }
            }
            return future.flatMap { value in Future { complete in complete(.success(value + 1)) } }
        }
        #expect(failed)
    }

    @Test(.exclusive) func aChainOfOneHundredThousandStagesEachObservedTooCompletesEveryObserverOnce() async {
        let allOnce = await Self.onASmallStack {
            let stages = 100_000
            let kept = Protected<FutureAbandonedTests.Complete?>(nil)
            let calls = Protected([Int](repeating: 0, count: stages))
            var future = Future<Int> { complete in kept.withLock { $0 = complete } }
            for index in 0..<stages {
                // Two callbacks on every future: the next stage, then an observer.
                future = future.map { $0 + 1 }
                future.observe { result in
                    if (try? result.get()) == index + 1 { calls.withLock { $0[index] += 1 } }
                }
            }
            Self.take(kept)?(.success(0))
            return calls.current.allSatisfy { $0 == 1 } && (try? future.result?.get()) == stages
        }
        #expect(allOnce)
    }

    @Test(.exclusive) func aChainOfOneHundredThousandStagesWhoseFuturesAreAbandonedInsideFailsOnce() async {
        let failedOnce = await Self.onASmallStack {
            let failures = Protected(0)
            let kept = Protected<FutureAbandonedTests.Complete?>(nil)
            var future = Future<Int> { complete in kept.withLock { $0 = complete } }
            for _ in 0..<100_000 {
                // The first stage's future is dropped by its body; every later stage sees the error.
                future = future.flatMap { _ in Future<Int> { _ in } }
            }
            future.observe { result in
                if case .failure(let error) = result, (error as? FutureError) == .abandoned {
                    failures.withLock { $0 += 1 }
                }
            }
            Self.take(kept)?(.success(0))
            return failures.current == 1
        }
        #expect(failedOnce)
    }

    /// Builds 100,000 stages with `stage` on a pending future, drops the work that would complete
    /// it, and tells whether the last stage failed with ``FutureError/abandoned``: dropping the
    /// pending work fails every stage, one at a time, and frees them.
    private static func abandoningAChainFailsItsTail(
        _ stage: @escaping @Sendable (Future<Int>, Int) -> Future<Int>
    ) async -> Bool {
        await onASmallStack {
            let kept = Protected<FutureAbandonedTests.Complete?>(nil)
            var future = Future<Int> { complete in kept.withLock { $0 = complete } }
            for index in 0..<100_000 {
                future = stage(future, index)
            }
            let tail = Protected<Bool?>(nil)
            future.observe { result in
                guard case .failure(let error) = result else { return tail.withLock { $0 = false } }
                tail.withLock { $0 = (error as? FutureError) == .abandoned }
            }
            kept.withLock { $0 = nil }
            return tail.current == true
        }
    }

    /// What `body` returns, run on a thread with a small stack, like a secondary thread on Apple
    /// platforms: a chain completed or failed by nested calls would overflow it.
    private static func onASmallStack(_ body: @escaping @Sendable () -> Bool) async -> Bool {
        let done = Completions<Bool>()
        let thread = Thread { done.record(0, body()) }
        thread.stackSize = 512 * 1024
        thread.start()
        await done.wait(for: 1)
        return done.results[0] == true
    }

    /// The `complete` function `kept` holds, taken out of it.
    private static func take(
        _ kept: Protected<FutureAbandonedTests.Complete?>
    ) -> FutureAbandonedTests.Complete? {
        kept.withLock { complete in
            defer { complete = nil }
            return complete
        }
    }
}
