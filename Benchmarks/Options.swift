/// The scenarios, by the names `--only` accepts.
enum ScenarioID: String, CaseIterable, Sendable {
    case fast
    case async
    case burst
    case scaling
    case memory
    case machine
    case loopback
}

/// The command line of `swift run -c release Benchmarks`.
struct Options: Sendable {
    /// `--quick`: fewer iterations and fewer rounds; still at least 5 measured rounds.
    var quick = false
    /// `--json PATH`: also write the figures as JSON.
    var jsonPath: String?
    /// `--only a,b`: the scenarios to run; all of them by default.
    var scenarios: [ScenarioID] = ScenarioID.allCases
    /// `--help`.
    var help = false
    /// `--memory-probe scenario|baseline`: internal; measure one memory figure in this process.
    var memoryProbe: MemoryProbe.Role?

    /// Usage text for `--help` and for mistakes.
    static let usage = """
        USAGE: swift run -c release Benchmarks [--quick] [--json PATH] [--only LIST]

        Measures RefreshingRequestClosure against baselines measured in the same process and run,
        and prints a table: scenario | figure | value | baseline | ratio | goal | met.

        OPTIONS:
          --json PATH   Also write every figure as JSON (name, value, unit, baseline, ratio, goal, met).
          --quick       Fewer iterations and fewer rounds (still at least 5 measured rounds).
          --only LIST   Comma-separated scenarios to run: \(ScenarioID.allCases.map(\.rawValue).joined(separator: ",")).
          --help        Show this text.

        Exit status: 0 when every scenario ran (a missed goal shows as NO in the table), 1 on an
        internal error (a burst that did not refresh exactly once, loopback errors), 2 on a usage error.
        """

    /// Parses the arguments after the program name.
    init(arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--help", "-h":
                help = true
            case "--json":
                guard let path = remaining.popFirst(), !path.isEmpty else { throw UsageError("--json needs a path") }
                jsonPath = path
            case "--only":
                guard let list = remaining.popFirst() else { throw UsageError("--only needs a list of scenarios") }
                var chosen: [ScenarioID] = []
                for name in list.split(separator: ",") {
                    guard let scenario = ScenarioID(rawValue: String(name)) else {
                        throw UsageError("unknown scenario \(name)")
                    }
                    chosen.append(scenario)
                }
                guard !chosen.isEmpty else { throw UsageError("--only needs a list of scenarios") }
                scenarios = ScenarioID.allCases.filter(chosen.contains)
            case "--memory-probe":
                guard let name = remaining.popFirst(), let role = MemoryProbe.Role(rawValue: name) else {
                    throw UsageError("--memory-probe needs scenario, baseline or heap")
                }
                memoryProbe = role
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
    }

    /// Warm-up and measured rounds of the in-process scenarios.
    var plan: RoundPlan {
        quick ? RoundPlan(warmUp: 1, measured: 5) : RoundPlan(warmUp: 2, measured: 7)
    }

    /// Rounds of the burst, which is short (tens of milliseconds) and so needs more of them.
    var burstPlan: RoundPlan {
        quick ? RoundPlan(warmUp: 1, measured: 7) : RoundPlan(warmUp: 2, measured: 15)
    }

    /// Calls per round of the fast-path scenarios.
    var fastPathIterations: Int {
        quick ? 20_000 : 100_000
    }

    /// Seconds per round and arm of the loopback scenario. Throughput on a shared two-core
    /// machine swings by half from one half-second to the next, so rounds are short (both arms of
    /// a round then see nearly the same machine) and many: their totals are steady.
    var loopbackRoundSeconds: Double {
        0.1
    }

    /// Rounds of the loopback scenario.
    var loopbackPlan: RoundPlan {
        quick ? RoundPlan(warmUp: 3, measured: 51) : RoundPlan(warmUp: 3, measured: 151)
    }
}

/// A mistake on the command line.
struct UsageError: Error, CustomStringConvertible {
    /// What is wrong, for people.
    let description: String

    /// Creates the error.
    init(_ description: String) {
        self.description = description
    }
}
