#if os(Linux)
import Foundation
import LocalRedis
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing
import Workload

@testable import RefreshQueueRedis

/// `RefreshWorker` processes, each with its own `RedisAuthenticationStore` on one real
/// `redis-server`, against the stub rotating refresh tokens and detecting their reuse.
@Suite(
    "Redis fleet", .serialized, .enabled(if: RedisFixture.enabled, RedisFixture.skipReason),
    .timeLimit(.minutes(5)))
struct RedisFleetTests {
    static let refreshTimeout = 3.0
    /// The lock's TTL, and the closure's `abandonAfter`.
    static let lockTTL = 4.0
    /// What a wait may take beyond its bound: threads scheduled late on a loaded machine.
    static let schedulingSlack = 2.0

    /// The stub (rotating, detecting reuse, answering token requests `latency` after it
    /// processed them on arrival), a server, and a store on a fresh key holding an expired token.
    private static func setUp(reuseInterval: TimeInterval, latency: TimeInterval = 0) async throws -> (
        SpotifyStub, LocalRedis, RedisAuthenticationStore<OAuth2Token>
    ) {
        let stub = try StubHarness.startedStub()
        stub.rotatesRefreshTokens = true
        stub.detectsRefreshTokenReuse = true
        stub.refreshTokenReuseInterval = reuseInterval
        if latency > 0 {
            stub.processesTokenRequestsOnArrival = true
            stub.tokenLatency = latency
        }
        let server = try RedisFixture.server()
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server), lockTTL: lockTTL)
        let token = try await StubHarness.logIn(stub, through: StubHarness.exampleClient(stub))
        try store.save(Self.expired(token))
        return (stub, server, store)
    }

    /// `token` as if it had expired an hour ago.
    static func expired(_ token: OAuth2Token) -> OAuth2Token {
        OAuth2Token(
            accessToken: token.accessToken, tokenType: token.tokenType, refreshToken: token.refreshToken,
            scope: token.scope, issuedAt: Date().addingTimeInterval(-7_200), expiresIn: 3_600)
    }

    private static func worker(
        _ mode: String, _ stub: SpotifyStub, _ server: LocalRedis, _ store: RedisAuthenticationStore<OAuth2Token>,
        _ extra: [String] = []
    ) throws -> ChildWorker {
        try ChildWorker(
            [
                mode, "--base", stub.baseURL.absoluteString, "--redis-port", String(server.port), "--redis-key",
                store.key, "--lock-ttl", String(lockTTL), "--refresh-timeout", String(refreshTimeout),
                "--request-timeout", "2",
            ] + extra,
            environment: ["REFRESHQUEUE_REDIS_PASSWORD": server.password])
    }

    @Test(.exclusive) func eightWorkersOfFiveHundredRequestsOnAnExpiredTokenRefreshOnce() async throws {
        let (stub, server, store) = try await Self.setUp(reuseInterval: 0)
        defer {
            stub.stop()
            server.stop()
        }
        let loginRequests = stub.counters.tokenRequests
        let workers = try (0..<8).map { _ in
            try Self.worker("burst", stub, server, store, ["--requests", "500", "--concurrency", "8"])
        }
        for worker in workers {
            try #require(await worker.waitForLine { $0 == "ready" }, "a worker never got ready: \(worker.lines)")
        }
        // Closing their input starts them all at once; each then prints its result.
        var results: [[String: Int]] = []
        await withTaskGroup(of: [String: String]?.self) { group in
            for worker in workers { group.addTask { await worker.finish(timeout: 120) } }
            for await result in group { results.append((result ?? [:]).compactMapValues(Int.init)) }
        }
        let total = { (key: String) in results.reduce(0) { $0 + $1[key, default: 0] } }
        #expect(total("status200") == 8 * 500, "results: \(results)")
        #expect(stub.counters.tokenRequests - loginRequests == 1)
        #expect(stub.counters.reuseDetections == 0)
        #expect(total("reauth") == 0)
        print(
            "redis fleet: 8 processes × 500 requests on an expired token · \(total("status200")) × 200 · "
                + "\(stub.counters.tokenRequests - loginRequests) refresh · \(stub.counters.reuseDetections) reuse "
                + "detections · redis-server \(server.version)")
    }

    @Test(.exclusive) func theLockOfAWorkerKilledMidRefreshExpiresAndASurvivorRefreshes() async throws {
        // The stub rotates on receipt and answers 0.5 s later: the kill lands after the server
        // has spent the old refresh token. With a reuse interval it accepts the spent one again.
        let (stub, server, store) = try await Self.setUp(reuseInterval: 30, latency: 0.5)
        defer {
            stub.stop()
            server.stop()
        }
        let spent = try #require(store.load()?.refreshToken)
        let seen = stub.counters.tokenRequests
        var workers = try (0..<4).map { _ in try Self.worker("kill", stub, server, store, ["--concurrency", "4"]) }
        // The refresh ends 0.5 s after its request: the kill lands before that.
        let kill = try await killTheRefreshLockHolder(
            after: seen, on: stub, among: workers, holder: { try? store.lockHolder() }
        ).get()
        let (index, killedAt) = (kill.index, kill.at)
        _ = workers[index].waitUntilExit()
        workers.remove(at: index)
        #expect(store.load()?.refreshToken == spent, "the refresh ended before the kill landed")

        // Timed on a thread of its own as well, which this task's own wait would not be.
        let recoveredAt = await onAThreadOfItsOwn { uptimeWhen { store.load()?.refreshToken != spent } }
        let recovery =
            try #require(recoveredAt, "no survivor refreshed: \(workers.map { $0.lines.suffix(3) })")
            - killedAt
        #expect(recovery < Self.lockTTL + Self.refreshTimeout + Self.schedulingSlack, "recovered after \(recovery) s")
        // Survivors keep working on the new token for a moment.
        let served = stub.counters.apiRequestsByStatus[200, default: 0]
        #expect(await StubHarness.eventually { stub.counters.apiRequestsByStatus[200, default: 0] > served + 20 })
        for worker in workers {
            let result = try #require(await worker.finish(), "a survivor never reported")
            let counts = result.compactMapValues(Int.init)
            #expect(counts["reauth", default: 0] == 0, "a survivor was logged out")
            #expect(counts["status200", default: 0] > 0)
            let longestWait = Double(result["longestWait"] ?? "") ?? .infinity
            #expect(longestWait <= Self.refreshTimeout + Self.lockTTL + Self.schedulingSlack, "waited \(longestWait) s")
        }
        #expect(stub.counters.reuseDetections == 0)
        print(
            String(
                format: "redis fleet: the refresh-lock holder killed with SIGKILL mid-refresh · a survivor refreshed "
                    + "%.2f s later (lock TTL %.0f s, refreshTimeout %.0f s) · %d reuse detections",
                recovery, Self.lockTTL, Self.refreshTimeout, stub.counters.reuseDetections))
    }
}
#endif
