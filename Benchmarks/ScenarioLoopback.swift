import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loopback end to end: requests per second through `URLSession` to the stub at concurrency 32
/// with 1-second access tokens (so refreshes happen), against the same workers sending a fixed
/// header with a long-lived token and no interceptor. A third arm, the floor, sends a fresh copy
/// of the request with the header merged in, as the library does, but without the library: what
/// any interceptor pays. Arms alternate in short rounds (A B C, then C B A).
///
/// It also reports how many requests a refresh held (they waited for it) and for how long: with
/// refresh ahead, none in a steady run. For comparison, a short run after the rounds refreshes
/// only when the token is needed, as a library without refresh ahead does.
enum ScenarioLoopback {
    /// Concurrent workers in each arm.
    static let workers = 32

    /// Starts the stub, logs in twice (a long-lived and a 1-second token), and runs the rounds.
    static func run(_ options: Options) async throws -> [Row] {
        let stub = SpotifyStub()
        try stub.start()
        defer { stub.stop() }
        let session = LoopbackSession.make(connections: workers * 2)
        defer { session.invalidateAndCancel() }
        let example = SpotifyStub.Client.example
        let client = TokenEndpointClient(
            tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: example.id,
            clientSecret: example.secret, session: session)

        stub.accessTokenLifetime = 3600
        let longLived = try await LoopbackLogin.logIn(stub: stub, client: client, session: session)
        stub.accessTokenLifetime = 1
        let shortLived = try await LoopbackLogin.logIn(stub: stub, client: client, session: session)
        let comparisonToken = try await LoopbackLogin.logIn(stub: stub, client: client, session: session)
        let log = RefreshLog()
        // Every request of this scenario goes to the Web API, so the default predicate (sign all)
        // is what an app would use; a predicate of its own would be the app's cost, not ours.
        let closure = RefreshingRequestClosure(
            client: client,
            store: InMemoryAuthenticationStore<OAuth2Token>(shortLived),
            options: .init(
                refreshWindow: .unlimited,
                onEvent: log.handler
            )
        )

        let plain = BenchmarkRequest.make(url: stub.baseURL.appendingPathComponent("v1/me"))
        let fixedHeader = "Bearer " + longLived.accessToken
        let fixed = BenchmarkRequest.setValueSigned(plain, header: fixedHeader)
        let sends: [@Sendable () async throws -> Int] = [
            { status(of: try await LoopbackSession.transfer(fixed, on: session).1) },
            {
                let signed = BenchmarkRequest.mergeSigned(plain, header: fixedHeader)
                return status(of: try await LoopbackSession.transfer(signed, on: session).1)
            },
            { status(of: try await closure.data(for: plain, using: session).1) },
        ]
        let (baselineIndex, floorIndex, scenarioIndex) = (0, 1, 2)

        // Every round of each arm, warm-up rounds first.
        var rounds: [[LoopbackArm]] = Array(repeating: [], count: sends.count)
        var refreshes = 0
        var rejected = 0
        let seconds = options.loopbackRoundSeconds
        let samples = try await Rounds.interleaveAsync(
            options.loopbackPlan,
            sends.indices.map { index in
                {
                    stub.resetCounters()
                    let arm = await LoopbackArm.run(workers: workers, seconds: seconds, send: sends[index])
                    if index == scenarioIndex {
                        let counters = stub.counters
                        refreshes += counters.refreshTokenGrants
                        rejected += counters.apiRequestsByStatus[401, default: 0]
                    }
                    rounds[index].append(arm)
                    return arm.requestsPerSecond
                }
            })

        let all = rounds.map { LoopbackArm.total(of: $0) }
        let measured = rounds.map { LoopbackArm.total(of: $0.dropFirst(options.loopbackPlan.warmUp)) }
        let errors = all.reduce(0) { $0 + $1.errors }
        let unexpected = all.reduce(0) { $0 + $1.unexpectedStatus }
        var problems: [String] = []
        if errors > 0 { problems.append("\(errors) loopback requests failed with an error") }
        if unexpected > 0 { problems.append("\(unexpected) loopback requests ended with a status other than 200") }
        if refreshes == 0 { problems.append("no refresh happened in the loopback scenario") }

        let scenario = measured[scenarioIndex]
        var details: [String: Double] = [
            "workers": Double(workers), "secondsPerRound": seconds,
            "refreshes": Double(refreshes), "retriedAfter401": Double(rejected),
            "errors": Double(errors), "non200": Double(unexpected),
        ]
        for (prefix, arm) in [
            ("scenario", scenario), ("baseline", measured[baselineIndex]), ("floor", measured[floorIndex]),
        ] {
            details[prefix + "Requests"] = Double(arm.completed)
            details[prefix + "Seconds"] = arm.seconds
            details[prefix + "PooledRequestsPerSecond"] = arm.requestsPerSecond
            details[prefix + "CPUMicrosecondsPerRequest"] = arm.cpuMicrosecondsPerRequest
        }
        details.merge(log.details) { first, _ in first }

        var row = Row(
            name: "loopback", scenario: "loopback end to end",
            figure: "requests/s, 32 workers, 1 s tokens", samples: samples[scenarioIndex], unit: "req/s",
            baseline: Baseline(name: "fixed header, no interceptor", samples: samples[baselineIndex]),
            goal: .atLeast(0.95), details: details)
        row.pooledRatio = pooledRatio(scenario, to: measured[baselineIndex])
        row.conditionsMet = errors == 0 && unexpected == 0 && refreshes > 0
        row.problems = problems

        // Requests held by a refresh, over every round of the scenario arm.
        let sent = LoopbackArm.total(of: rounds[scenarioIndex]).completed
        var held = makeHeldRow(
            name: "loopback_held", figure: "requests held by a refresh (refresh ahead)", log: log, sent: sent,
            goal: .atMost(0))
        // None held says something only if refreshes happened and every request was answered by
        // the server: requests that failed, or a token never refreshed, hold nothing either.
        held.conditionsMet = row.conditionsMet

        // The same traffic refreshing only when the token is needed: requests wait at every expiry.
        // A leeway no longer than the safety margin (a tenth of the 1 s lifetime): a refresh is
        // recommended only once it is needed.
        let onlyWhenNeeded = TokenLeeway(minimum: 0, fractionOfLifetime: 0.1, maximumFractionOfLifetime: 1)
        let comparisonLog = RefreshLog()
        let comparison = RefreshingRequestClosure(
            client: client,
            store: InMemoryAuthenticationStore<OAuth2Token>(comparisonToken),
            leeway: onlyWhenNeeded,
            options: .init(
                refreshWindow: .unlimited,
                onEvent: comparisonLog.handler
            )
        )
        let comparisonArm = await LoopbackArm.run(
            workers: workers, seconds: options.quick ? 1 : 3,
            send: { status(of: try await comparison.data(for: plain, using: session).1) })
        let comparisonRow = makeHeldRow(
            name: "loopback_held_only_when_needed", figure: "requests held by a refresh (refresh only when needed)",
            log: comparisonLog, sent: comparisonArm.completed, goal: .report)

        var floorRow = Row(
            name: "loopback_vs_floor", scenario: "loopback end to end",
            figure: "requests/s, vs the same mutation without the library", samples: samples[scenarioIndex],
            unit: "req/s",
            baseline: Baseline(name: "fresh copy + header merged, no interceptor", samples: samples[floorIndex]),
            goal: .atLeast(0.98), details: details)
        floorRow.pooledRatio = pooledRatio(scenario, to: measured[floorIndex])
        floorRow.conditionsMet = row.conditionsMet
        return [row, floorRow, held, comparisonRow]
    }

    /// A row of how many of `sent` requests a refresh held, with the hold times in the figure.
    private static func makeHeldRow(name: String, figure: String, log: RefreshLog, sent: Int, goal: Goal) -> Row {
        let hold = log.holdMilliseconds
        let text = figure + String(format: ", hold p50 %.1f ms, p99 %.1f ms", hold.p50, hold.p99)
        return Row(
            name: name, scenario: "loopback end to end", figure: text, samples: Samples([Double(log.requestsHeld)]),
            unit: "requests", baseline: Baseline(name: "requests sent", samples: Samples([Double(sent)])), goal: goal,
            details: log.details.merging(["requestsSent": Double(sent)]) { first, _ in first })
    }

    /// Throughput over every measured round, one arm's over another's: a round of 0.1 s holds a
    /// few hundred requests, so one round's ratio swings widely, while 151 rounds' totals do not.
    private static func pooledRatio(_ arm: LoopbackArm, to baseline: LoopbackArm) -> Double? {
        baseline.requestsPerSecond > 0 ? arm.requestsPerSecond / baseline.requestsPerSecond : nil
    }

    /// The HTTP status of `response`, or -1.
    private static func status(of response: URLResponse) -> Int {
        (response as? HTTPURLResponse)?.statusCode ?? -1
    }
}
