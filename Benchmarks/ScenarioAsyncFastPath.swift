import Foundation

/// Fast path, async form: nanoseconds per `try await authorize(_:)` with a valid token held,
/// against `setValue` + completion and against a bare `withCheckedContinuation` round trip.
enum ScenarioAsyncFastPath {
    /// Runs the interleaved rounds in a nonisolated async context (no actor hops) and returns two rows.
    static func run(_ options: Options, warm: WarmClosure) async throws -> [Row] {
        let base = try BenchmarkRequest.make()
        let header = warm.header
        let closure = warm.closure
        let iterations = options.fastPathIterations
        let completion: Completion = { blackHole($0) }
        let samples = try await Rounds.interleaveAsync(
            options.plan,
            [
                { SigningLoops.setValue(base, header: header, completion: completion, iterations: iterations) },
                { await SigningLoops.continuation(base, iterations: iterations) },
                { try await SigningLoops.authorizeAsync(closure, base, iterations: iterations) },
            ])
        let details = ["iterationsPerRound": Double(iterations)]
        return [
            Row(
                name: "fast_path_async", scenario: "fast path, async form", figure: "ns per try await authorize",
                samples: samples[2], unit: "ns",
                baseline: Baseline(name: "setValue + completion", samples: samples[0]), goal: .report,
                details: details),
            Row(
                name: "fast_path_async_continuation", scenario: "fast path, async form",
                figure: "ns per try await authorize, vs a continuation", samples: samples[2], unit: "ns",
                baseline: Baseline(name: "withCheckedContinuation round trip", samples: samples[1]), goal: .report,
                details: details),
        ]
    }
}
