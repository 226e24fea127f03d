import Foundation

/// The machine's load average (runnable threads over the last 1, 5 and 15 minutes), printed with
/// the table: ratios measured on a busy machine read differently from those of a quiet one.
struct LoadAverage: Sendable, CustomStringConvertible {
    /// Over 1, 5 and 15 minutes; `nil` where the system does not say.
    let values: [Double]?

    /// The load average now.
    static func now() -> LoadAverage {
        var values = [Double](repeating: 0, count: 3)
        let count = getloadavg(&values, 3)
        return LoadAverage(values: count == 3 ? values : nil)
    }

    /// `0.52 0.31 0.20`, or `unknown`.
    var description: String {
        values.map { $0.map { String(format: "%.2f", $0) }.joined(separator: " ") } ?? "unknown"
    }
}
