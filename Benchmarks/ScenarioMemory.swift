import Foundation

/// Memory: resident bytes per waiting request with 100,000 waiting, against 100,000 requests
/// plus their completions held in an array. Each figure is measured in a fresh child process.
/// Where glibc's allocation trace is available, one more child counts the heap blocks and bytes
/// that each waiting request keeps allocated, and the figure says them.
enum ScenarioMemory {
    /// The goal: waiting costs at most this much more than holding the requests in an array.
    static let goal = Goal.atMost(1.05)

    /// Runs interleaved probes: one warm-up pair, then at least five measured pairs.
    static func run(_ options: Options) throws -> [Row] {
        let baselineName = "100,000 URLRequests + completions in an array"
        let figure = "resident bytes per waiting request (100,000 waiting)"
        guard ResidentMemory.isAvailable else {
            return [
                Row(
                    name: "memory", scenario: "memory", figure: figure + ", unavailable here", samples: nil,
                    unit: "B", baseline: Baseline(name: baselineName, samples: nil), goal: goal)
            ]
        }
        let samples = try Rounds.interleave(
            RoundPlan(warmUp: 1, measured: options.plan.measured),
            [
                { try MemoryProbe.spawn(.baseline) },
                { try MemoryProbe.spawn(.scenario) },
            ])
        var details = ["requests": Double(MemoryProbe.requests)]
        var described = figure
        if let live = try MemoryProbe.spawnHeapTrace() {
            let blocks = Double(live.blocks) / Double(MemoryProbe.requests)
            let bytes = Double(live.bytes) / Double(MemoryProbe.requests)
            details["heapBlocksPerRequest"] = blocks
            details["heapBytesPerRequest"] = bytes
            described =
                "resident bytes per waiting request (100,000 waiting; each keeps "
                + String(format: "%.2f heap blocks, %.0f B", blocks, bytes) + ")"
        }
        return [
            Row(
                name: "memory", scenario: "memory", figure: described, samples: samples[1], unit: "B",
                baseline: Baseline(name: baselineName, samples: samples[0]), goal: goal, details: details)
        ]
    }
}
