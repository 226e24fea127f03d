import Foundation

/// Scaling: the burst's drain cost per request with 1,000, 10,000 and 100,000 requests waiting,
/// each compared with the 1,000 case. The goal is a flat cost: 100k / 1k ≤ 1.3.
enum ScenarioScaling {
    /// The numbers of waiting requests.
    static let sizes = [1_000, 10_000, 100_000]

    /// Runs interleaved rounds of the three sizes.
    static func run(_ options: Options) throws -> [Row] {
        let base = try BenchmarkRequest.make()
        var audit = BurstAudit()
        let arms: [() throws -> Double] = sizes.map { size in
            {
                let outcome = try BurstDrain.scenario(requests: size, base: base)
                audit.record(outcome)
                return outcome.nanoseconds / Double(size)
            }
        }
        let samples = try Rounds.interleave(options.plan, arms)
        let reference = Baseline(name: "the 1,000 case", samples: samples[0])
        return zip(sizes, samples).map { size, samples in
            var row = Row(
                name: "scaling_\(size / 1_000)k", scenario: "scaling",
                figure: "ns per request, drain of \(size.grouped) waiting", samples: samples, unit: "ns",
                baseline: reference, goal: size == sizes.last ? .atMost(1.3) : .report,
                details: ["requests": Double(size), "refreshesPerBurst": audit.maximumRefreshes])
            row.conditionsMet = audit.isClean
            row.problems = audit.problems
            return row
        }
    }
}
