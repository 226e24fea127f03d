import RefreshQueue

/// The future arms of ``ScenarioFuture``: chains built on a pending future, completed, their last
/// result read, then released. Each returns the sum of its chains' results, `nil` on an error.
///
/// A chain's head is pending until its `complete` is called through a ``PendingWork``, which holds
/// it as a network request would.
enum ScenarioFutureChains {
    /// One chain of `stages` `map` stages.
    @inline(never)
    static func longMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        let work = opaque(PendingWork<Int>())
        var tail = Future<Int> { work.complete = $0 }
        for _ in 0..<stages {
            tail = tail.map(transform.function)
        }
        work.finish(with: 0)
        return try? tail.result?.get()
    }

    /// One chain of `stages` `flatMap` stages.
    @inline(never)
    static func longFlatMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedFuture
        let work = opaque(PendingWork<Int>())
        var tail = Future<Int> { work.complete = $0 }
        for _ in 0..<stages {
            tail = tail.flatMap(transform.function)
        }
        work.finish(with: 0)
        return try? tail.result?.get()
    }

    /// `chains` chains of three `map` stages.
    @inline(never)
    static func shortMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        let work = opaque(PendingWork<Int>())
        var sum = 0
        for _ in 0..<chains {
            let head = Future<Int> { work.complete = $0 }
            let tail = head.map(transform.function).map(transform.function).map(transform.function)
            work.finish(with: 0)
            guard case .success(let value) = tail.result else { return nil }
            sum &+= value
        }
        return sum
    }

    /// `chains` chains of three `flatMap` stages.
    @inline(never)
    static func shortFlatMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedFuture
        let work = opaque(PendingWork<Int>())
        var sum = 0
        for _ in 0..<chains {
            let head = Future<Int> { work.complete = $0 }
            let tail = head.flatMap(transform.function).flatMap(transform.function).flatMap(
                transform.function)
            work.finish(with: 0)
            guard case .success(let value) = tail.result else { return nil }
            sum &+= value
        }
        return sum
    }

    /// Where a chain's `complete` waits, on the heap, for the work to finish: a `complete` kept in a
    /// local variable would let the optimizer see it never escapes and allocate less than any real
    /// use does. Generic, as `Future` is, so that `complete` is stored as it is passed: a property
    /// of a concrete function type would wrap it in a reabstraction thunk, an allocation that work
    /// which calls `complete` from its own callback does not make.
    final class PendingWork<Value: Sendable>: @unchecked Sendable {
        var complete: (@Sendable (Result<Value, any Error>) -> Void)?

        /// Completes the chain with `value` and lets go of `complete`, as finished work does.
        func finish(with value: Value) {
            let complete = self.complete
            self.complete = nil
            complete?(.success(value))
        }
    }
}
