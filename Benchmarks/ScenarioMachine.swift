import Foundation
import RefreshQueue

/// The refresh state machine alone: nanoseconds of its own decisions per request, every event of
/// the request included, for 10,000 requests held by one refresh and for 10,000 going through the
/// line with a fresh token; against `setValue` + completion per request (what signing one costs).
enum ScenarioMachine {
    /// Requests per round.
    static let requests = 10_000

    /// Runs interleaved rounds of both shapes and the baseline.
    static func run(_ options: Options) throws -> [Row] {
        let base = try BenchmarkRequest.make()
        let header = FakeAuthentication(stale: false, refresher: ManualRefresher()).bearerHeader
        let completion: Completion = { blackHole($0) }
        let samples = try Rounds.interleave(
            options.plan,
            [
                { SigningLoops.setValue(base, header: header, completion: completion, iterations: requests) },
                { StateMachineWorkload.nanosecondsPerRequest(.heldByARefresh, requests: requests) },
                { StateMachineWorkload.nanosecondsPerRequest(.throughTheLine, requests: requests) },
            ])
        let baseline = Baseline(name: "setValue + completion", samples: samples[0])
        let details = ["requestsPerRound": Double(requests)]
        return [
            Row(
                name: "machine_held", scenario: "state machine",
                figure: "ns per request event, 10,000 held by a refresh", samples: samples[1], unit: "ns",
                baseline: baseline, goal: .report, details: details),
            Row(
                name: "machine_line", scenario: "state machine",
                figure: "ns per request event, 10,000 through the line", samples: samples[2], unit: "ns",
                baseline: baseline, goal: .report, details: details),
        ]
    }
}
