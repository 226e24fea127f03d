import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

/// In what order, and when, the callbacks of a future run.
@Suite("Future callback order", .timeLimit(.minutes(5)))
struct FutureCallbackOrderTests {
    typealias Complete = @Sendable (Result<Int, any Error>) -> Void

    @Test func observersOfAPendingFutureRunInTheOrderTheyWereRegistered() throws {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in kept.withLock { $0 = complete } }
        let order = Protected<[Int]>([])
        for index in 1...5 {
            future.observe { _ in order.withLock { $0.append(index) } }
        }
        #expect(order.current.isEmpty)
        let complete = try #require(kept.current)
        complete(.success(1))
        #expect(order.current == [1, 2, 3, 4, 5])
    }

    @Test func theSecondAndThirdObserversRunAfterTheFirstAndOnlyOnce() throws {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in kept.withLock { $0 = complete } }
        let seen = Protected<[String]>([])
        for name in ["first", "second", "third"] {
            future.observe { result in
                let value = (try? result.get()) ?? -1
                seen.withLock { $0.append("\(name) \(value)") }
            }
        }
        let complete = try #require(kept.current)
        complete(.success(4))
        complete(.success(5))
        #expect(seen.current == ["first 4", "second 4", "third 4"])
    }

    @Test func theCallbacksOfAFutureAStageCompletesRunBeforeTheNextObserverOfTheFirst() throws {
        let kept = Protected<Complete?>(nil)
        let source = Future<Int> { complete in kept.withLock { $0 = complete } }
        let order = Protected<[String]>([])
        source.observe { _ in order.withLock { $0.append("a") } }
        let stage = source.map { $0 + 1 }
        stage.observe { _ in order.withLock { $0.append("stage") } }
        stage.map { $0 + 1 }.observe { _ in order.withLock { $0.append("stage of stage") } }
        source.observe { _ in order.withLock { $0.append("b") } }
        let complete = try #require(kept.current)
        complete(.success(1))
        // Depth first, as nested calls would have run them.
        #expect(order.current == ["a", "stage", "stage of stage", "b"])
    }

    @Test func anObserverOfACompletedFutureRunsBeforeObserveReturns() {
        for future in [Future(value: 1), Future { $0(.success(1)) }, Future(value: 0).map { $0 + 1 }] {
            let ran = Protected(false)
            future.observe { _ in ran.withLock { $0 = true } }
            #expect(ran.current)
        }
    }

    @Test func anObserverRegisteredByAnotherObserverRunsToo() throws {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in kept.withLock { $0 = complete } }
        let order = Protected<[String]>([])
        future.observe { _ in
            order.withLock { $0.append("outer") }
            // Complete by now: runs at once, inside this observer.
            future.observe { _ in order.withLock { $0.append("inner") } }
        }
        future.observe { _ in order.withLock { $0.append("later") } }
        let complete = try #require(kept.current)
        complete(.success(1))
        #expect(order.current == ["outer", "inner", "later"])
    }

    @Test func aStageRegisteredOnACompletedFutureCompletesBeforeMapReturns() throws {
        let mapped = Future(value: 2).map { $0 * 3 }
        #expect(mapped.isCompleted)
        #expect(try mapped.result?.get() == 6)
        let kept = Protected<Complete?>(nil)
        let pending = Future<Int> { complete in kept.withLock { $0 = complete } }
        let stage = pending.map { $0 * 3 }
        #expect(!stage.isCompleted)
        #expect(stage.result == nil)
        let complete = try #require(kept.current)
        complete(.success(3))
        #expect(try stage.result?.get() == 9)
    }
}
