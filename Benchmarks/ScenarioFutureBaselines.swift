/// The baselines of ``ScenarioFuture``: plain closures composing `Result`, each capturing the
/// transform as a future's stage does, built and applied as many times as the future arms build
/// and complete stages. Each returns the sum of its chains' results, `nil` on an error.
enum ScenarioFutureBaselines {
    /// One stage: what a `map` or `flatMap` stage does, as a function of `Result`.
    typealias Stage = (Result<Int, any Error>) -> Result<Int, any Error>

    /// `stages` closures applying the `map` transform, built into an array and applied in order.
    @inline(never)
    static func longMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        var chain: [Stage] = []
        chain.reserveCapacity(stages)
        for _ in 0..<stages {
            chain.append { result in result.flatMap { value in Result { try transform.function(value) } } }
        }
        return applied(chain)
    }

    /// `stages` closures calling the function that stands for a `flatMap` transform.
    @inline(never)
    static func longFlatMap(_ stages: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedResult
        var chain: [Stage] = []
        chain.reserveCapacity(stages)
        for _ in 0..<stages {
            chain.append { result in result.flatMap { value in transform.function(value) } }
        }
        return applied(chain)
    }

    /// Three closures applying the `map` transform, built and applied `chains` times.
    @inline(never)
    static func shortMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.increment
        // Held by an object the optimizer cannot follow, so that every closure is really built:
        // a future's stages are, since the future holds them.
        let chain = opaque(ShortChain())
        var sum = 0
        for _ in 0..<chains {
            chain.first = { result in result.flatMap { value in Result { try transform.function(value) } } }
            chain.second = { result in result.flatMap { value in Result { try transform.function(value) } } }
            chain.third = { result in result.flatMap { value in Result { try transform.function(value) } } }
            guard case .success(let value) = chain.applied(to: .success(0)) else { return nil }
            sum &+= value
        }
        return sum
    }

    /// Three closures calling the function that stands for a `flatMap` transform, built and
    /// applied `chains` times.
    @inline(never)
    static func shortFlatMaps(_ chains: Int, _ transforms: ScenarioFutureTransforms) -> Int? {
        let transform = transforms.cachedResult
        let chain = opaque(ShortChain())
        var sum = 0
        for _ in 0..<chains {
            chain.first = { result in result.flatMap { value in transform.function(value) } }
            chain.second = { result in result.flatMap { value in transform.function(value) } }
            chain.third = { result in result.flatMap { value in transform.function(value) } }
            guard case .success(let value) = chain.applied(to: .success(0)) else { return nil }
            sum &+= value
        }
        return sum
    }

    /// The result of applying `chain` in order to `0`.
    private static func applied(_ chain: [Stage]) -> Int? {
        var result: Result<Int, any Error> = .success(0)
        for stage in chain {
            result = stage(result)
        }
        return try? result.get()
    }

    /// The three stages of a short chain.
    private final class ShortChain {
        var first: Stage = { $0 }
        var second: Stage = { $0 }
        var third: Stage = { $0 }

        func applied(to result: Result<Int, any Error>) -> Result<Int, any Error> {
            third(second(first(result)))
        }
    }
}
