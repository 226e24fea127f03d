import Foundation

/// Burst: 10,000 requests arrive while one refresh is pending (completed after 50 ms); time from
/// the refresh's completion to the last request's completion, against 10,000 × (`setValue` +
/// completion) on one thread. Exactly one refresh per burst.
enum ScenarioBurst {
    /// Requests per burst.
    static let requests = 10_000

    /// Runs interleaved rounds of the burst and its baseline.
    static func run(_ options: Options) throws -> [Row] {
        let base = try BenchmarkRequest.make()
        let header = FakeAuthentication(stale: false, refresher: ManualRefresher()).bearerHeader
        var audit = BurstAudit()
        let samples = try Rounds.interleave(
            options.burstPlan,
            [
                { try BurstDrain.baseline(requests: requests, base: base, header: header).nanoseconds / 1_000 },
                {
                    let outcome = try BurstDrain.scenario(requests: requests, base: base)
                    audit.record(outcome)
                    return outcome.nanoseconds / 1_000
                },
            ])
        var row = Row(
            name: "burst", scenario: "burst",
            figure: "us from refresh completion to last of 10,000 completions", samples: samples[1], unit: "us",
            baseline: Baseline(name: "10,000 x (setValue + completion)", samples: samples[0]), goal: .atMost(0.7),
            details: [
                "requests": Double(requests), "refreshesPerBurst": audit.maximumRefreshes,
                "nanosecondsPerRequest": samples[1].median * 1_000 / Double(requests),
            ])
        row.conditionsMet = audit.isClean
        row.problems = audit.problems
        return [row]
    }
}
