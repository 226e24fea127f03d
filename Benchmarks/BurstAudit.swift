/// Checks the outcomes of a burst's rounds and describes what went wrong.
struct BurstAudit {
    private(set) var refreshCounts: [Int] = []
    private(set) var failures = 0

    /// Records one round.
    mutating func record(_ outcome: BurstDrain.Outcome) {
        refreshCounts.append(outcome.refreshes)
        failures += outcome.failures
    }

    /// Whether every burst refreshed exactly once and every request was signed.
    var isClean: Bool {
        refreshCounts.allSatisfy { $0 == 1 } && failures == 0
    }

    /// Problems for the report, if any.
    var problems: [String] {
        var problems: [String] = []
        if let wrong = refreshCounts.first(where: { $0 != 1 }) {
            problems.append("a burst started \(wrong) refreshes instead of exactly 1")
        }
        if failures > 0 {
            problems.append("\(failures) requests of bursts failed instead of being signed")
        }
        return problems
    }

    /// The largest number of refreshes one burst started.
    var maximumRefreshes: Double {
        Double(refreshCounts.max() ?? 0)
    }
}
