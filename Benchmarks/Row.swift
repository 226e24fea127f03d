/// What a row's ratio is expected to achieve.
enum Goal: Sendable {
    /// The ratio must be at most this value.
    case atMost(Double)
    /// The ratio must be at least this value.
    case atLeast(Double)
    /// No goal: the ratio is reported for information.
    case report

    /// Whether `ratio` meets the goal; `nil` when there is no goal or no ratio.
    func isMet(by ratio: Double?) -> Bool? {
        guard let ratio, ratio.isFinite else {
            if case .report = self { return nil }
            return false
        }
        switch self {
        case .atMost(let limit): return ratio <= limit
        case .atLeast(let limit): return ratio >= limit
        case .report: return nil
        }
    }

    /// `<= 0.6`, `>= 0.95` or `report`.
    var text: String {
        switch self {
        case .atMost(let limit): return "<= \(Report.trimmed(limit))"
        case .atLeast(let limit): return ">= \(Report.trimmed(limit))"
        case .report: return "report"
        }
    }
}

/// A figure measured in the same run as the scenario, that the scenario is compared with.
struct Baseline: Sendable {
    /// What was measured, for people: `setValue + completion`.
    let name: String
    /// Its rounds; `nil` when it could not be measured on this platform.
    let samples: Samples?
}

/// One line of the report: a scenario's figure, its baseline and the ratio between them.
struct Row: Sendable {
    /// A stable key for machines: `fast_path_callback`.
    let name: String
    /// The scenario, as the issue names it: `fast path, callback form`.
    let scenario: String
    /// What the value is: `ns per authorize`; a scenario may add what explains it.
    var figure: String
    /// The scenario's rounds; `nil` when unavailable on this platform.
    let samples: Samples?
    /// The unit of the value and the baseline: `ns`, `B`, `req/s`.
    let unit: String
    /// What the value is compared with.
    let baseline: Baseline
    /// The goal for `ratio`.
    let goal: Goal
    /// Counts that explain the figure (refreshes, errors, requests), for the JSON.
    var details: [String: Double] = [:]
    /// Conditions besides the ratio that the goal needs (exactly one refresh, no errors).
    var conditionsMet = true
    /// What went wrong inside the benchmark; any problem makes the run exit non-zero.
    var problems: [String] = []
    /// The ratio over all measured rounds pooled (the scenario's total over the baseline's),
    /// for throughput rows whose rounds are too short for each one's ratio to be steady.
    var pooledRatio: Double?

    /// The scenario over the baseline, round by round: both arms of a round ran back to back, so
    /// each round's ratio sees the same machine state. `nil` when either side is unavailable.
    var roundRatios: Samples? {
        guard let values = samples?.values, let bases = baseline.samples?.values, values.count == bases.count,
            !bases.contains(0)
        else { return nil }
        return Samples(zip(values, bases).map { $0 / $1 })
    }

    /// The pooled ratio when there is one; else the median of the round-by-round ratios; when the
    /// rounds do not pair up (a baseline shared with another scenario), the median of the scenario
    /// over the median of the baseline.
    var ratio: Double? {
        if let pooledRatio { return pooledRatio }
        if let paired = roundRatios { return paired.median }
        guard let value = samples?.median, let base = baseline.samples?.median, base != 0 else { return nil }
        return value / base
    }

    /// Whether the goal is met; `nil` for rows that only report.
    var met: Bool? {
        guard samples != nil else { return nil }
        guard let met = goal.isMet(by: ratio) else { return nil }
        return met && conditionsMet
    }
}
