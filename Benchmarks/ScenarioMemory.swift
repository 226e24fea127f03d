import Foundation

/// Memory: resident bytes per waiting request with 100,000 waiting, against 100,000 requests
/// plus their completions held in an array. Each figure is measured in a fresh child process.
enum ScenarioMemory {
    /// Runs interleaved probes: one warm-up pair, then at least five measured pairs.
    static func run(_ options: Options) throws -> [Row] {
        let baselineName = "100,000 URLRequests + completions in an array"
        let figure = "resident bytes per waiting request (100,000 waiting)"
        guard ResidentMemory.isAvailable else {
            return [
                Row(
                    name: "memory", scenario: "memory", figure: figure + ", unavailable here", samples: nil,
                    unit: "B", baseline: Baseline(name: baselineName, samples: nil), goal: .atMost(1.5))
            ]
        }
        let samples = try Rounds.interleave(
            RoundPlan(warmUp: 1, measured: options.plan.measured),
            [
                { try MemoryProbe.spawn(.baseline) },
                { try MemoryProbe.spawn(.scenario) },
            ])
        return [
            Row(
                name: "memory", scenario: "memory", figure: figure, samples: samples[1], unit: "B",
                baseline: Baseline(name: baselineName, samples: samples[0]), goal: .atMost(1.5),
                details: ["requests": Double(MemoryProbe.requests)])
        ]
    }
}
