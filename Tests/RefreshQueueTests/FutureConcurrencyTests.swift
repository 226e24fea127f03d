import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

/// Futures observed, chained, read and completed from many threads at once.
@Suite("Future concurrency", .timeLimit(.minutes(5)))
struct FutureConcurrencyTests {
    typealias Complete = @Sendable (Result<Int, any Error>) -> Void

    @Test(.exclusive) func thousandsOfObserversAddedWhileTheFutureCompletesEachRunOnceWithTheResult() throws {
        let observers = 4_000
        for round in 0..<5 {
            let kept = Protected<Complete?>(nil)
            let future = Future<Int> { complete in kept.withLock { $0 = complete } }
            let complete = try #require(kept.current)
            let calls = Protected([Int](repeating: 0, count: observers))
            let values = Protected<Set<Int>>([])
            // The future completes somewhere among the registrations, from one of the threads.
            let completeAt = observers / 5 * (round + 1) - 1
            DispatchQueue.concurrentPerform(iterations: observers) { index in
                if index == completeAt { complete(.success(round)) }
                future.observe { result in
                    calls.withLock { $0[index] += 1 }
                    values.withLock { _ = $0.insert((try? result.get()) ?? -1) }
                }
            }
            #expect(calls.current.allSatisfy { $0 == 1 })
            #expect(values.current == [round])
        }
    }

    @Test(.exclusive) func stagesAddedFromManyThreadsWhileTheSourceCompletesEachCompleteOnce() throws {
        let stages = 2_000
        let kept = Protected<Complete?>(nil)
        let source = Future<Int> { complete in kept.withLock { $0 = complete } }
        let complete = try #require(kept.current)
        let calls = Protected([Int](repeating: 0, count: stages))
        let results = Protected([Int?](repeating: nil, count: stages))
        DispatchQueue.concurrentPerform(iterations: stages) { index in
            if index == stages / 2 { complete(.success(10)) }
            source
                .map { value -> Int in
                    calls.withLock { $0[index] += 1 }
                    return value + index
                }
                .flatMap { value in Future(value: value * 2) }
                .observe { result in results.withLock { $0[index] = try? result.get() } }
        }
        #expect(calls.current.allSatisfy { $0 == 1 })
        #expect(results.current == (0..<stages).map { Optional(($0 + 10) * 2) })
    }

    @Test(.exclusive) func resultAndIsCompletedReadFromManyThreadsSeeNothingOrTheWholeResult() throws {
        for _ in 0..<20 {
            let kept = Protected<(@Sendable (Result<String, any Error>) -> Void)?>(nil)
            let future = Future<String> { complete in kept.withLock { $0 = complete } }
                .map { $0 + " and more, long enough for a string kept on the heap" }
            let complete = try #require(kept.current)
            let wrong = Protected(0)
            DispatchQueue.concurrentPerform(iterations: 200) { index in
                if index == 100 { complete(.success("a value")) }
                let completed = future.isCompleted
                switch future.result {
                case nil:
                    if completed { wrong.withLock { $0 += 1 } }
                case .success(let value):
                    if value != "a value and more, long enough for a string kept on the heap" {
                        wrong.withLock { $0 += 1 }
                    }
                case .failure:
                    wrong.withLock { $0 += 1 }
                }
            }
            #expect(wrong.current == 0)
            #expect(try future.result?.get() == "a value and more, long enough for a string kept on the heap")
        }
    }

    @Test func completeCalledFromManyThreadsAtOnceCompletesAChainOnce() throws {
        let kept = Protected<Complete?>(nil)
        let calls = Protected(0)
        let tail = Future<Int> { complete in kept.withLock { $0 = complete } }
            .map { value -> Int in
                calls.withLock { $0 += 1 }
                return value
            }
            .flatMap { Future(value: $0 + 1) }
        let complete = try #require(kept.current)
        DispatchQueue.concurrentPerform(iterations: 64) { attempt in
            complete(.success(attempt * 10))
        }
        #expect(calls.current == 1)
        let value = try #require(try tail.result?.get())
        #expect(value % 10 == 1)
    }
}
