import Foundation
import RefreshQueue

/// Future: nanoseconds per `map` and per `flatMap` stage, against plain closures composing `Result`
/// that apply the same transforms, built and applied the same number of times.
///
/// - Long chains: 100,000 stages built on a pending future, which is then completed, and the chain
///   released; against 100,000 closures, each capturing the transform, built and applied in order.
/// - Short chains: the shape of a real refresh. A pending future from `Future { complete in ... }`,
///   three stages, then completed and its result read; 30,000 such chains per round, against three
///   closures composing `Result` built and applied 30,000 times.
///
/// A `flatMap` stage's transform returns an already completed `Future(value:)`, as a cache hit
/// would; the baseline's closures call a function returning a `Result` instead.
enum ScenarioFuture {
    /// Stages of a long chain.
    static let longStages = 100_000
    /// Stages of a short chain.
    static let shortStages = 3
    /// Short chains per round.
    static let shortChains = 30_000

    /// Runs interleaved rounds of every chain and its baseline.
    static func run(_ options: Options) throws -> [Row] {
        let transforms = ScenarioFutureTransforms()
        let long = longStages
        let short = (chains: shortChains, stages: shortChains * shortStages)
        let samples = try Rounds.interleave(
            options.plan,
            [
                { try timed(stages: long) { ScenarioFutureBaselines.longMap(long, transforms) } },
                { try timed(stages: long) { ScenarioFutureChains.longMap(long, transforms) } },
                { try timed(stages: long) { ScenarioFutureBaselines.longFlatMap(long, transforms) } },
                { try timed(stages: long) { ScenarioFutureChains.longFlatMap(long, transforms) } },
                { try timed(stages: short.stages) { ScenarioFutureBaselines.shortMaps(short.chains, transforms) } },
                { try timed(stages: short.stages) { ScenarioFutureChains.shortMaps(short.chains, transforms) } },
                { try timed(stages: short.stages) { ScenarioFutureBaselines.shortFlatMaps(short.chains, transforms) } },
                { try timed(stages: short.stages) { ScenarioFutureChains.shortFlatMaps(short.chains, transforms) } },
            ])
        let baseline = "plain closures composing Result"
        let longDetails = ["stages": Double(long)]
        let shortDetails = ["chains": Double(short.chains), "stagesPerChain": Double(shortStages)]
        return [
            Row(
                name: "future_map", scenario: "Future",
                figure: "ns per map stage, 100,000-stage chain", samples: samples[1], unit: "ns",
                baseline: Baseline(name: baseline, samples: samples[0]), goal: .atMost(3), details: longDetails),
            Row(
                name: "future_flatmap", scenario: "Future",
                figure: "ns per flatMap stage, 100,000-stage chain", samples: samples[3], unit: "ns",
                baseline: Baseline(name: baseline, samples: samples[2]), goal: .atMost(5), details: longDetails),
            Row(
                name: "future_short_map", scenario: "Future",
                figure: "ns per map stage, 3-stage chains", samples: samples[5], unit: "ns",
                baseline: Baseline(name: baseline, samples: samples[4]), goal: .atMost(3), details: shortDetails),
            Row(
                name: "future_short_flatmap", scenario: "Future",
                figure: "ns per flatMap stage, 3-stage chains", samples: samples[7], unit: "ns",
                baseline: Baseline(name: baseline, samples: samples[6]), goal: .atMost(5), details: shortDetails),
        ]
    }

    /// Nanoseconds per stage of `arm`, which returns the sum of its chains' results: each stage adds
    /// one, so that must be `stages`.
    private static func timed(stages: Int, _ arm: () -> Int?) throws -> Double {
        settleHeap()
        let start = monotonicNanoseconds()
        let sum = arm()
        let elapsed = nanosecondsSince(start)
        guard sum == stages else {
            throw BenchmarkError("chains of \(stages) stages in all ended with \(sum.map(String.init) ?? "an error")")
        }
        return elapsed / Double(stages)
    }

    /// Lets the allocator tidy up what the arm before left, outside the timed region.
    ///
    /// glibc keeps small freed blocks aside and merges them all at the next large allocation: the
    /// hundreds of thousands of blocks one arm frees would otherwise be merged, and charged, in
    /// the next arm (the baseline's array, say).
    private static func settleHeap() {
        let block = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        blackHole(block)
        block.deallocate()
    }
}
