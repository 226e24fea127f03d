import Foundation

/// Burst: 10,000 requests arrive while one refresh is pending (completed after 50 ms); time from
/// the refresh's completion to the last request's completion, against 10,000 × (`setValue` +
/// completion) on one thread. Exactly one refresh per burst.
enum ScenarioBurst {
    /// Requests per burst.
    static let requests = 10_000

    /// At most half the time of the reference loop.
    static let goal = Goal.atMost(0.5)

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
            baseline: Baseline(name: "10,000 x (setValue + completion)", samples: samples[0]), goal: goal,
            details: [
                "requests": Double(requests), "refreshesPerBurst": audit.maximumRefreshes,
                "nanosecondsPerRequest": samples[1].median * 1_000 / Double(requests),
            ])
        // The spread of the round-by-round ratios, besides their median: a drain that is fast
        // only sometimes is not fast.
        if let ratios = row.roundRatios {
            let quartiles = (ratios.quantile(0.25), ratios.quantile(0.75))
            let within = ratios.values.filter { goal.isMet(by: $0) == true }.count
            row.details["ratioQuartile1"] = quartiles.0
            row.details["ratioQuartile3"] = quartiles.1
            row.details["roundsMeetingGoal"] = Double(within)
            row.figure += String(
                format: " (ratio quartiles %.2f-%.2f; %d of %d rounds within the goal)", quartiles.0, quartiles.1,
                within, ratios.values.count)
        }
        row.conditionsMet = audit.isClean
        row.problems = audit.problems
        return [row]
    }
}
