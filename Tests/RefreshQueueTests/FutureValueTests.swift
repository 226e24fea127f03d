import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

/// Values of every shape through futures, and what futures keep alive and for how long.
@Suite("Future values", .timeLimit(.minutes(5)))
struct FutureValueTests {
    @Test func valuesOfEveryShapeComeThroughMapFlatMapAndObserve() throws {
        try expectRoundTrip(42)
        try expectRoundTrip("a string long enough to keep its characters on the heap, not inline")
        try expectRoundTrip(Optional<Int>.none)
        try expectRoundTrip(Wide(first: 1, second: 2, third: 3, fourth: "four"))
        try expectRoundTrip(Aligned(lanes: SIMD4<Float>(1, 2, 3, 4)))
        try expectRoundTrip(Empty())
        try expectRoundTrip([1, 2, 3])
        try expectRoundTrip(Result<Int, ExampleError>.failure(ExampleError(code: 1)))
    }

    @Test func errorsComeThroughEveryStage() throws {
        let failing = Future<Wide>(error: ExampleError(code: 7))
        #expect(throws: ExampleError(code: 7)) { try failing.map { $0.first }.result?.get() }
        #expect(throws: ExampleError(code: 7)) { try failing.flatMap { Future(value: $0.first) }.result?.get() }
        #expect(throws: ExampleError(code: 8)) {
            try failing.mapError { _ in ExampleError(code: 8) }.result?.get()
        }
        #expect(try failing.recover { _ in Wide(first: 9, second: 0, third: 0, fourth: "") }.result?.get().first == 9)
    }

    @Test func aFutureReleasesItsValueWhenItIsReleased() {
        let released = Protected(0)
        do {
            // Held in the future itself, and in a box (too large to be held in the future).
            let small = Future(value: Tracked(released))
            let large = Future(value: Wide(first: 1, second: 2, third: 3, fourth: "4", tracked: Tracked(released)))
            let failed = Future<Int>(error: TrackedError(Tracked(released)))
            #expect(released.current == 0)
            withExtendedLifetime((small, large, failed)) {}
        }
        #expect(released.current == 3)
    }

    @Test func aValuePassedDownAChainIsReleasedWithTheLastFutureHoldingIt() throws {
        let released = Protected(0)
        let kept = Protected<(@Sendable (Result<Tracked, any Error>) -> Void)?>(nil)
        var tail: Future<Tracked>? = Future<Tracked> { complete in kept.withLock { $0 = complete } }
            .map { $0 }
            .flatMap { Future(value: $0) }
        do {
            let complete = try #require(kept.current)
            complete(.success(Tracked(released)))
        }
        kept.withLock { $0 = nil }
        #expect(released.current == 0)
        tail = nil
        #expect(released.current == 1)
        _ = tail
    }

    @Test func aStageReleasesItsTransformOnceItHasRun() throws {
        let released = Protected(0)
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let source = Future<Int> { complete in kept.withLock { $0 = complete } }
        let stage: Future<Int>
        do {
            let captured = Tracked(released)
            stage = source.map { value in
                withExtendedLifetime(captured) { value + 1 }
            }
        }
        #expect(released.current == 0)
        let complete = try #require(kept.current)
        complete(.success(1))
        // The stage's future is still held, but not the transform that completed it.
        #expect(released.current == 1)
        #expect(try stage.result?.get() == 2)
    }

    @Test func aStageOfAnAbandonedFutureReleasesItsTransformAndFails() {
        let released = Protected(0)
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let stage: Future<Int>
        do {
            let captured = Tracked(released)
            stage = Future<Int> { complete in kept.withLock { $0 = complete } }
                .flatMap { value in withExtendedLifetime(captured) { Future(value: value) } }
        }
        kept.withLock { $0 = nil }
        #expect(released.current == 1)
        guard case .failure(let error) = stage.result else {
            Issue.record("expected the stage to have failed")
            return
        }
        #expect((error as? FutureError) == .abandoned)
    }

    @Test func flatMapToAFutureAlreadyCompleted() throws {
        #expect(try Future(value: 1).flatMap { Future(value: $0 + 1) }.result?.get() == 2)
        #expect(try Future(value: 1).flatMap { value in Future { $0(.success(value + 2)) } }.result?.get() == 3)
        let completedLater = Future(value: 1).map { $0 + 3 }
        #expect(try Future(value: 0).flatMap { _ in completedLater }.result?.get() == 4)
        #expect(throws: ExampleError(code: 2)) {
            try Future(value: 1).flatMap { _ in Future<Int>(error: ExampleError(code: 2)) }.result?.get()
        }
    }

    @Test func flatMapToAPendingFutureCompletesWhenItDoes() throws {
        let innerComplete = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let inner = Future<Int> { complete in innerComplete.withLock { $0 = complete } }
        let sourceComplete = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let source = Future<Int> { complete in sourceComplete.withLock { $0 = complete } }
        let fromCompleted = Future(value: 1).flatMap { _ in inner }
        let fromPending = source.flatMap { _ in inner }.map { $0 * 10 }
        #expect(fromCompleted.result == nil)
        let completeSource = try #require(sourceComplete.current)
        completeSource(.success(1))
        #expect(fromPending.result == nil)
        let completeInner = try #require(innerComplete.current)
        completeInner(.success(5))
        #expect(try fromCompleted.result?.get() == 5)
        #expect(try fromPending.result?.get() == 50)
    }

    @Test func errorStagesOnAPendingFutureWaitForIt() throws {
        let kept = Protected<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let source = Future<Int> { complete in kept.withLock { $0 = complete } }
        let mapped = source.mapError { _ in ExampleError(code: 3) }
        let recovered = source.recover { _ in 4 }
        let flatRecovered = source.flatMapError { _ in Future(value: 5) }
        #expect(mapped.result == nil && recovered.result == nil && flatRecovered.result == nil)
        let complete = try #require(kept.current)
        complete(.failure(ExampleError(code: 1)))
        #expect(throws: ExampleError(code: 3)) { try mapped.result?.get() }
        #expect(try recovered.result?.get() == 4)
        #expect(try flatRecovered.result?.get() == 5)
    }

    /// Checks that `value` comes out of a completed future, a pending one completed later, and
    /// `map`, `flatMap` and `observe` stages of both.
    private func expectRoundTrip<T: Sendable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let kept = Protected<(@Sendable (Result<T, any Error>) -> Void)?>(nil)
        let pending = Future<T> { complete in kept.withLock { $0 = complete } }
        let observed = Protected<[T]>([])
        let futures = [Future(value: value), pending]
        var stages: [Future<T>] = []
        for future in futures {
            stages += [
                future,
                future.map { $0 },
                future.flatMap { Future(value: $0) },
                future.flatMap { value in Future { $0(.success(value)) } },
                future.map { $0 }.flatMap { Future(value: $0) }.map { $0 },
            ]
        }
        for stage in stages {
            stage.observe { result in
                if let value = try? result.get() { observed.withLock { $0.append(value) } }
            }
        }
        let complete = try #require(kept.current, sourceLocation: sourceLocation)
        complete(.success(value))
        for stage in stages {
            #expect(try stage.result?.get() == value, sourceLocation: sourceLocation)
        }
        #expect(observed.current == Array(repeating: value, count: stages.count), sourceLocation: sourceLocation)
    }
}

/// Counts its releases.
private final class Tracked: Sendable, Equatable {
    private let released: Protected<Int>

    init(_ released: Protected<Int>) {
        self.released = released
    }

    deinit {
        released.withLock { $0 += 1 }
    }

    static func == (left: Tracked, right: Tracked) -> Bool { left === right }
}

/// An error holding a reference, to see that a failed future releases it.
private struct TrackedError: Error {
    let tracked: Tracked

    init(_ tracked: Tracked) {
        self.tracked = tracked
    }
}

/// A value larger than a future holds inline.
private struct Wide: Sendable, Equatable {
    var first: Int
    var second: Int
    var third: Int
    var fourth: String
    var tracked: Tracked?

    init(first: Int, second: Int, third: Int, fourth: String, tracked: Tracked? = nil) {
        self.first = first
        self.second = second
        self.third = third
        self.fourth = fourth
        self.tracked = tracked
    }
}

/// A value that needs a stricter alignment than a future's storage has.
private struct Aligned: Sendable, Equatable {
    var lanes: SIMD4<Float>
}

/// A value of no size.
private struct Empty: Sendable, Equatable {}
