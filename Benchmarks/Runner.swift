import Foundation

/// Runs the chosen scenarios one after the other and collects their rows and problems.
enum Runner {
    /// Everything a run produced.
    struct Outcome {
        /// The rows of every scenario that ran.
        var rows: [Row] = []
        /// Internal errors: scenarios that could not run, and problems found in the rows.
        var problems: [String] = []
    }

    /// Runs every scenario in `options`, reporting progress on standard error.
    static func runAll(_ options: Options) -> Outcome {
        var outcome = Outcome()
        for scenario in options.scenarios {
            progress("running \(scenario.rawValue)...")
            let start = monotonicNanoseconds()
            do {
                let rows = try run(scenario, options)
                outcome.rows += rows
                outcome.problems += rows.flatMap { row in row.problems.map { "\(row.name): \($0)" } }
            } catch {
                outcome.problems.append("\(scenario.rawValue): \(error)")
            }
            progress(String(format: "  done in %.1f s", nanosecondsSince(start) / 1_000_000_000))
        }
        return outcome
    }

    /// Runs one scenario; the async ones through ``AsyncBridge``.
    private static func run(_ scenario: ScenarioID, _ options: Options) throws -> [Row] {
        switch scenario {
        case .fast:
            return try ScenarioFastPath.run(options, warm: try WarmClosure.make())
        case .async:
            let warm = try WarmClosure.make()
            return try AsyncBridge.run { try await ScenarioAsyncFastPath.run(options, warm: warm) }
        case .burst:
            return try ScenarioBurst.run(options)
        case .scaling:
            return try ScenarioScaling.run(options)
        case .memory:
            return try ScenarioMemory.run(options)
        case .machine:
            return try ScenarioMachine.run(options)
        case .loopback:
            return try AsyncBridge.run { try await ScenarioLoopback.run(options) }
        }
    }

    /// A line on standard error, so that standard output holds only the table.
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
