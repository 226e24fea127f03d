import Foundation

/// Renders rows as a table for people and as JSON for machines.
enum Report {
    /// The table: scenario | figure | value | baseline | ratio | goal | met.
    static func table(_ rows: [Row]) -> String {
        let header = ["scenario", "figure", "value [min-max]", "baseline [min-max]", "ratio [min-max]", "goal", "met"]
        let lines = rows.map { row -> [String] in
            let value = row.samples.map { describe($0, unit: row.unit) } ?? "unavailable"
            let baseline =
                row.baseline.name + ": " + (row.baseline.samples.map { describe($0, unit: row.unit) } ?? "unavailable")
            // Three decimals, so that a ratio just short of its goal never reads as meeting it.
            var ratio = row.ratio.map { String(format: "%.3f", $0) } ?? "-"
            if let rounds = row.roundRatios, rounds.values.count > 1 {
                ratio += String(format: " [%.2f-%.2f]", rounds.min, rounds.max)
            }
            let met: String
            switch row.met {
            case .some(true): met = "yes"
            case .some(false): met = "NO"
            case .none: met = "-"
            }
            return [row.scenario, row.figure, value, baseline, ratio, row.goal.text, met]
        }
        let all = [header] + lines
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        /// One line of cells, each padded to its column's width.
        func render(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")
        return ([render(header), rule] + lines.map(render)).joined(separator: "\n")
    }

    /// The JSON document: every row with its value, baseline, ratio, goal and whether it is met.
    static func json(_ rows: [Row], quick: Bool, load: (before: LoadAverage, after: LoadAverage)) throws -> Data {
        let document = Document(
            quick: quick, processors: ProcessInfo.processInfo.activeProcessorCount,
            loadAverageBefore: load.before.values, loadAverageAfter: load.after.values, rows: rows.map(JSONRow.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document)
    }

    /// `812 ns [790-830]`.
    static func describe(_ samples: Samples, unit: String) -> String {
        "\(number(samples.median)) \(unit) [\(number(samples.min))-\(number(samples.max))]"
    }

    /// A number with sensible precision for the table.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        switch abs(value) {
        case 100...: return String(format: "%.0f", value)
        case 10..<100: return String(format: "%.1f", value)
        default: return String(format: "%.2f", value)
        }
    }

    /// `0.6` rather than `0.6000`.
    static func trimmed(_ value: Double) -> String {
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

/// The top level of the JSON report.
private struct Document: Encodable {
    /// Whether the run was `--quick`.
    let quick: Bool
    /// Active processors, to read the figures with.
    let processors: Int
    /// The load average over 1, 5 and 15 minutes when the run began and when it ended.
    let loadAverageBefore: [Double]?
    let loadAverageAfter: [Double]?
    /// Every row of the table.
    let rows: [JSONRow]
}

/// One row in JSON: `name`, `value`, `unit`, `baseline`, `ratio`, `goal`, `met` and the rest.
private struct JSONRow: Encodable {
    /// Median, minimum, maximum and every round of a measurement, with `nil` for what is missing.
    struct Figure {
        let median: Double?
        let min: Double?
        let max: Double?
        let rounds: [Double]

        /// The figure of `samples`, all `nil` when unavailable.
        init(_ samples: Samples?) {
            median = samples.map { finite($0.median) } ?? nil
            min = samples.map { finite($0.min) } ?? nil
            max = samples.map { finite($0.max) } ?? nil
            rounds = samples?.values.filter(\.isFinite) ?? []
        }
    }

    /// The baseline's name and figure.
    struct BaselineFigure: Encodable {
        let name: String
        let value: Double?
        let min: Double?
        let max: Double?

        /// Encodes missing values as `null` rather than leaving the keys out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(value, forKey: .value)
            try container.encode(min, forKey: .min)
            try container.encode(max, forKey: .max)
        }

        /// The JSON keys.
        private enum CodingKeys: String, CodingKey {
            case name, value, min, max
        }
    }

    let name: String
    let scenario: String
    let figure: String
    let value: Double?
    let min: Double?
    let max: Double?
    let rounds: [Double]
    let unit: String
    let baseline: BaselineFigure
    let ratio: Double?
    let ratioRounds: [Double]
    let goal: String
    let met: Bool?
    let details: [String: Double]
    let problems: [String]

    /// The JSON form of `row`.
    init(_ row: Row) {
        let figure = Figure(row.samples)
        let base = Figure(row.baseline.samples)
        name = row.name
        scenario = row.scenario
        self.figure = row.figure
        value = figure.median
        min = figure.min
        max = figure.max
        rounds = figure.rounds
        unit = row.unit
        baseline = BaselineFigure(name: row.baseline.name, value: base.median, min: base.min, max: base.max)
        ratio = row.ratio.flatMap(finite)
        ratioRounds = row.roundRatios?.values.filter(\.isFinite) ?? []
        goal = row.goal.text
        met = row.met
        details = row.details.filter { $0.value.isFinite }
        problems = row.problems
    }

    /// Encodes missing values as `null` rather than leaving the keys out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(scenario, forKey: .scenario)
        try container.encode(figure, forKey: .figure)
        try container.encode(value, forKey: .value)
        try container.encode(min, forKey: .min)
        try container.encode(max, forKey: .max)
        try container.encode(rounds, forKey: .rounds)
        try container.encode(unit, forKey: .unit)
        try container.encode(baseline, forKey: .baseline)
        try container.encode(ratio, forKey: .ratio)
        try container.encode(ratioRounds, forKey: .ratioRounds)
        try container.encode(goal, forKey: .goal)
        try container.encode(met, forKey: .met)
        try container.encode(details, forKey: .details)
        try container.encode(problems, forKey: .problems)
    }

    /// The JSON keys.
    private enum CodingKeys: String, CodingKey {
        case name, scenario, figure, value, min, max, rounds, unit, baseline, ratio, ratioRounds, goal, met, details,
            problems
    }
}

/// `value` if it is finite, else `nil` (JSON has no NaN or infinity).
private func finite(_ value: Double) -> Double? {
    value.isFinite ? value : nil
}
