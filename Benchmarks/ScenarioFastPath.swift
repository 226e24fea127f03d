import Foundation

/// Fast path, callback form: nanoseconds per `authorize(_:completion:)` with a valid token held,
/// against `setValue` + completion (what a typical interceptor pays), against the same header merge
/// the library makes done without it (the floor), and against a bare copy-on-write + completion;
/// and what reading the request's URL alone costs, which the origin check cannot avoid.
enum ScenarioFastPath {
    /// Runs the interleaved rounds and returns the rows: the goal ratio, the ratio to the floor, to a
    /// bare copy, and the URL read against the floor.
    static func run(_ options: Options, warm: WarmClosure) throws -> [Row] {
        let base = try BenchmarkRequest.make()
        let header = warm.header
        let closure = warm.closure
        let iterations = options.fastPathIterations
        let completion: Completion = { blackHole($0) }
        let samples = try Rounds.interleave(
            options.plan,
            [
                { SigningLoops.setValue(base, header: header, completion: completion, iterations: iterations) },
                { SigningLoops.copyOnWrite(base, completion: completion, iterations: iterations) },
                { SigningLoops.authorize(closure, base, completion: completion, iterations: iterations) },
                { SigningLoops.merge(base, header: header, completion: completion, iterations: iterations) },
                { SigningLoops.readURL(base, iterations: iterations) },
            ])
        let details = ["iterationsPerRound": Double(iterations)]
        return [
            Row(
                name: "fast_path_callback", scenario: "fast path, callback form",
                figure: "ns per authorize (valid token held)", samples: samples[2], unit: "ns",
                baseline: Baseline(name: "setValue + completion", samples: samples[0]), goal: .atMost(0.6),
                details: details),
            Row(
                name: "fast_path_callback_floor", scenario: "fast path, callback form",
                figure: "ns per authorize, vs the floor", samples: samples[2], unit: "ns",
                baseline: Baseline(name: "copy + allHTTPHeaderFields merge + completion", samples: samples[3]),
                goal: .atMost(1.1), details: details),
            Row(
                name: "fast_path_callback_copy", scenario: "fast path, callback form",
                figure: "ns per authorize, vs a bare copy", samples: samples[2], unit: "ns",
                baseline: Baseline(name: "copy-on-write + completion", samples: samples[1]), goal: .report,
                details: details),
            Row(
                name: "fast_path_url_read", scenario: "fast path, callback form",
                figure: "ns per request.url read (part of the origin check)", samples: samples[4], unit: "ns",
                baseline: Baseline(name: "copy + allHTTPHeaderFields merge + completion", samples: samples[3]),
                goal: .report, details: details),
        ]
    }
}
