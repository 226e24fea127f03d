import Dispatch

/// Nanoseconds on the monotonic clock.
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Nanoseconds elapsed since `start`, as a floating-point number.
func nanosecondsSince(_ start: UInt64) -> Double {
    Double(monotonicNanoseconds() &- start)
}

/// The measured rounds of one quantity, with their median, minimum and maximum.
struct Samples: Sendable {
    /// Every measured round, in the order it ran (warm-up rounds excluded).
    let values: [Double]

    /// Wraps the values of the measured rounds; there must be at least one.
    init(_ values: [Double]) {
        precondition(!values.isEmpty, "a measurement needs at least one round")
        self.values = values
    }

    /// The middle value; the mean of the two middle values for an even count.
    var median: Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The value below which a fraction `p` of the rounds lie, interpolated between neighbours:
    /// `quantile(0.25)` and `quantile(0.75)` bound the middle half.
    func quantile(_ p: Double) -> Double {
        let sorted = values.sorted()
        let position = Swift.min(Swift.max(p, 0), 1) * Double(sorted.count - 1)
        // check-apple: 32-bit safe (an index: p is clamped to 0...1, so position lies in 0...count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }

    /// The smallest round.
    var min: Double { values.min() ?? .nan }

    /// The largest round.
    var max: Double { values.max() ?? .nan }
}

/// How many rounds a scenario runs: warm-up rounds that are thrown away, then measured ones.
struct RoundPlan: Sendable {
    /// Rounds run first and discarded (caches, allocator, lazy initialization, CPU frequency).
    let warmUp: Int
    /// Rounds whose values are reported; at least 5.
    let measured: Int
}

/// Runs several arms (a scenario and its baselines) in interleaved rounds.
///
/// Every round runs each arm once, so slow drift of the machine (frequency, neighbours) hits
/// all arms alike; the order of the arms alternates between rounds so that none always runs
/// first. Each arm returns the figure of one round (nanoseconds per operation, say).
enum Rounds {
    /// Runs synchronous arms; returns one `Samples` per arm, in the order given.
    static func interleave(_ plan: RoundPlan, _ arms: [() throws -> Double]) throws -> [Samples] {
        var values = Array(repeating: [Double](), count: arms.count)
        for round in 0..<(plan.warmUp + plan.measured) {
            for index in order(of: arms.count, round: round) {
                let value = try arms[index]()
                if round >= plan.warmUp {
                    values[index].append(value)
                }
            }
        }
        return values.map(Samples.init)
    }

    /// Runs asynchronous arms; returns one `Samples` per arm, in the order given.
    static func interleaveAsync(_ plan: RoundPlan, _ arms: [() async throws -> Double]) async throws -> [Samples] {
        var values = Array(repeating: [Double](), count: arms.count)
        for round in 0..<(plan.warmUp + plan.measured) {
            for index in order(of: arms.count, round: round) {
                let value = try await arms[index]()
                if round >= plan.warmUp {
                    values[index].append(value)
                }
            }
        }
        return values.map(Samples.init)
    }

    /// Forward on even rounds, backward on odd ones.
    private static func order(of count: Int, round: Int) -> [Int] {
        round.isMultiple(of: 2) ? Array(0..<count) : Array((0..<count).reversed())
    }
}
