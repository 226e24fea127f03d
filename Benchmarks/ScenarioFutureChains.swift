import RefreshQueue

/// The future arms of ``ScenarioFuture``: chains built on a pending future, completed, their last
/// result read, then released. Each returns the sum of its chains' results, `nil` on an error.
enum ScenarioFutureChains {
    /// One chain of `stages` `map` stages.
    @inline(never)
    static func longMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        var complete: (@Sendable (Result<Int, any Error>) -> Void)?
        var tail = Future<Int> { complete = $0 }
        for _ in 0..<stages {
            tail = tail.map(transform)
        }
        complete?(.success(0))
        return try? tail.result?.get()
    }

    /// One chain of `stages` `flatMap` stages.
    @inline(never)
    static func longFlatMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedFuture
        var complete: (@Sendable (Result<Int, any Error>) -> Void)?
        var tail = Future<Int> { complete = $0 }
        for _ in 0..<stages {
            tail = tail.flatMap(transform)
        }
        complete?(.success(0))
        return try? tail.result?.get()
    }

    /// `chains` chains of three `map` stages.
    @inline(never)
    static func shortMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        var sum = 0
        for _ in 0..<chains {
            var complete: (@Sendable (Result<Int, any Error>) -> Void)?
            let head = Future<Int> { complete = $0 }
            let tail = head.map(transform).map(transform).map(transform)
            complete?(.success(0))
            guard case .success(let value) = tail.result else { return nil }
            sum &+= value
        }
        return sum
    }

    /// `chains` chains of three `flatMap` stages.
    @inline(never)
    static func shortFlatMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedFuture
        var sum = 0
        for _ in 0..<chains {
            var complete: (@Sendable (Result<Int, any Error>) -> Void)?
            let head = Future<Int> { complete = $0 }
            let tail = head.flatMap(transform).flatMap(transform).flatMap(transform)
            complete?(.success(0))
            guard case .success(let value) = tail.result else { return nil }
            sum &+= value
        }
        return sum
    }
}
