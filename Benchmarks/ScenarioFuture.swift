import Foundation
import RefreshQueue

/// Future: nanoseconds per `map` stage of a 100,000-stage chain (built on a pending future, then
/// completed and released), against 100,000 plain closures composing `Result`, built and applied.
enum ScenarioFuture {
    /// Stages per chain.
    static let stages = 100_000

    /// The transform of every stage.
    private static let increment: @Sendable (Int) throws -> Int = { $0 &+ 1 }

    /// Runs interleaved rounds of both chains.
    static func run(_ options: Options) throws -> [Row] {
        let samples = try Rounds.interleave(
            options.plan,
            [
                { try timed(closureChain) },
                { try timed(futureChain) },
            ])
        return [
            Row(
                name: "future_map", scenario: "Future",
                figure: "ns per map stage, 100,000-stage chain", samples: samples[1], unit: "ns",
                baseline: Baseline(name: "plain closures composing Result", samples: samples[0]), goal: .report,
                details: ["stages": Double(stages)])
        ]
    }

    /// Nanoseconds per stage of `chain`, which must end with the value `stages`.
    private static func timed(_ chain: (Int) -> Result<Int, any Error>?) throws -> Double {
        let start = monotonicNanoseconds()
        let result = chain(stages)
        let elapsed = nanosecondsSince(start)
        guard case .success(stages) = result else {
            throw BenchmarkError("a chain did not produce \(stages)")
        }
        return elapsed / Double(stages)
    }

    /// Builds `count` `map` stages on a pending future, completes it, and returns the last result.
    @inline(never)
    private static func futureChain(_ count: Int) -> Result<Int, any Error>? {
        var complete: (@Sendable (Result<Int, any Error>) -> Void)?
        let head = Future<Int> { complete = $0 }
        let transform = opaque(increment)
        var tail = head
        for _ in 0..<count {
            tail = tail.map(transform)
        }
        complete?(.success(0))
        return tail.result
    }

    /// Builds `count` closures that each apply the transform to a `Result`, and applies them in order.
    ///
    /// Each closure captures the transform, as each `map` stage does, so each has a context of its own.
    @inline(never)
    private static func closureChain(_ count: Int) -> Result<Int, any Error>? {
        let transform = opaque(increment)
        var chain: [(Result<Int, any Error>) -> Result<Int, any Error>] = []
        for _ in 0..<count {
            chain.append { result in result.flatMap { value in Result { try transform(value) } } }
        }
        var result: Result<Int, any Error> = .success(0)
        for stage in chain {
            result = stage(result)
        }
        return result
    }
}
