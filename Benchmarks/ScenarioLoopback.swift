import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loopback end to end: requests per second through `URLSession` to the stub at concurrency 32
/// with 1-second access tokens (so refreshes happen), against the same workers sending a fixed
/// header with a long-lived token and no interceptor. Arms alternate round by round.
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
        let log = RefreshLog()
        let closure = RefreshingRequestClosure(
            client: client, store: InMemoryAuthenticationStore<OAuth2Token>(shortLived), refreshWindow: .unlimited,
            requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true }, onEvent: log.handler)

        let plain = BenchmarkRequest.make(url: stub.baseURL.appendingPathComponent("v1/me"))
        let fixed = BenchmarkRequest.setValueSigned(plain, header: "Bearer " + longLived.accessToken)
        let baselineSend: @Sendable () async throws -> Int = {
            status(of: try await LoopbackSession.transfer(fixed, on: session).1)
        }
        let scenarioSend: @Sendable () async throws -> Int = {
            status(of: try await closure.data(for: plain, using: session).1)
        }

        var baselineTotal = LoopbackArm()
        var scenarioTotal = LoopbackArm()
        var refreshes = 0
        var rejected = 0
        let seconds = options.loopbackRoundSeconds
        let samples = try await Rounds.interleaveAsync(
            options.loopbackPlan,
            [
                {
                    let arm = await LoopbackArm.run(workers: workers, seconds: seconds, send: baselineSend)
                    baselineTotal.add(arm)
                    return arm.requestsPerSecond
                },
                {
                    stub.resetCounters()
                    let arm = await LoopbackArm.run(workers: workers, seconds: seconds, send: scenarioSend)
                    let counters = stub.counters
                    refreshes += counters.refreshTokenGrants
                    rejected += counters.apiRequestsByStatus[401, default: 0]
                    scenarioTotal.add(arm)
                    return arm.requestsPerSecond
                },
            ])

        let errors = baselineTotal.errors + scenarioTotal.errors
        let unexpected = baselineTotal.unexpectedStatus + scenarioTotal.unexpectedStatus
        var problems: [String] = []
        if errors > 0 { problems.append("\(errors) loopback requests failed with an error") }
        if unexpected > 0 { problems.append("\(unexpected) loopback requests ended with a status other than 200") }
        if refreshes == 0 { problems.append("no refresh happened in the loopback scenario") }
        var row = Row(
            name: "loopback", scenario: "loopback end to end",
            figure: "requests/s, 32 workers, 1 s tokens", samples: samples[1], unit: "req/s",
            baseline: Baseline(name: "fixed header, no interceptor", samples: samples[0]), goal: .atLeast(0.95),
            details: [
                "workers": Double(workers), "secondsPerRound": seconds,
                "scenarioRequests": Double(scenarioTotal.succeeded + scenarioTotal.unexpectedStatus),
                "baselineRequests": Double(baselineTotal.succeeded + baselineTotal.unexpectedStatus),
                "refreshes": Double(refreshes), "retriedAfter401": Double(rejected),
                "errors": Double(errors), "non200": Double(unexpected),
                "scenarioSeconds": scenarioTotal.seconds,
                "scenarioCPUMicrosecondsPerRequest": scenarioTotal.cpuMicrosecondsPerRequest,
                "baselineCPUMicrosecondsPerRequest": baselineTotal.cpuMicrosecondsPerRequest,
            ].merging(log.details) { first, _ in first })
        row.conditionsMet = errors == 0 && unexpected == 0 && refreshes > 0
        row.problems = problems
        return [row]
    }

    /// The HTTP status of `response`, or -1.
    private static func status(of response: URLResponse) -> Int {
        (response as? HTTPURLResponse)?.statusCode ?? -1
    }
}
