#if os(Linux)
import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Four `RefreshWorker` processes share one token file; the one holding the refresh lock is
/// killed with SIGKILL while its token request is in flight, after the server has rotated the
/// refresh token (the stub rotates on receipt and answers 0.3 s later). `CRASH_KILLS` kills per
/// mode (default 20).
///
/// What the client can and cannot do about it: the kernel releases a dead process's `flock`, so
/// a survivor takes the lock at once and no request waits past `refreshTimeout`; the file is
/// replaced atomically, so it always parses. But the refresh token in the file was spent by the
/// dead process, and the new one died with it. A server with a reuse interval accepts the spent
/// token once more: survivors recover. A server with strict rotation sees a replay and revokes
/// the family: no client can prevent that; every process must then end in the re-login path,
/// once, without a retry loop.
@Suite("Crash-kill across processes", .serialized, .timeLimit(.minutes(5)))
struct CrashKillTests {
    static let kills = ProcessInfo.processInfo.environment["CRASH_KILLS"].flatMap(Int.init) ?? 20
    static let refreshTimeout = 3.0
    /// What a wait for a signature may take beyond `refreshTimeout`: the timer's thread being
    /// scheduled on a loaded machine.
    static let schedulingSlack = 2.0
    static let requestsAfterReauthentication = 5
    /// The grace mode's reuse interval, in seconds.
    static let reuseInterval = 10.0

    /// The stub as a rotating server that detects reuse, processes token requests on arrival and
    /// answers them 0.3 s later; a token file in a fresh directory.
    private static func setUp(reuseInterval: TimeInterval) throws -> (SpotifyStub, URL, URL) {
        let stub = try StubHarness.startedStub()
        stub.rotatesRefreshTokens = true
        stub.detectsRefreshTokenReuse = true
        stub.processesTokenRequestsOnArrival = true
        stub.tokenLatency = 0.3
        stub.refreshTokenReuseInterval = reuseInterval
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (stub, directory, directory.appendingPathComponent("token.json"))
    }

    private static func login(_ stub: SpotifyStub) async throws -> OAuth2Token {
        try await StubHarness.logIn(stub, through: StubHarness.exampleClient(stub))
    }

    private static func worker(_ stub: SpotifyStub, file: URL) throws -> ChildWorker {
        try ChildWorker([
            "kill", "--base", stub.baseURL.absoluteString, "--file", file.path, "--concurrency", "4",
            "--refresh-timeout", String(refreshTimeout), "--request-timeout", "2",
        ])
    }

    /// The file-lock holder of the next refresh after the first `seen`, killed; nil if no worker
    /// held the lock (the refresh ended before it could be seen).
    private static func killTheHolderOfTheNextRefresh(
        _ stub: SpotifyStub, after seen: Int, lockFile: String, workers: [ChildWorker]
    ) async throws -> KilledLockHolder? {
        switch await killTheRefreshLockHolder(
            after: seen, on: stub, among: workers, holder: { LockHolder.pid(ofFileAt: lockFile) })
        {
        case .success(let kill): return kill
        case .failure(.noWorkerHoldsTheLock): return nil
        case .failure(let failure): throw failure
        }
    }

    @Test(.exclusive) func withAReuseIntervalSurvivorsRecoverFromEveryKillWithinTheRefreshTimeout() async throws {
        // Longer than a survivor takes to refresh on a loaded machine; recovery is checked
        // against refreshTimeout on its own.
        let (stub, directory, file) = try Self.setUp(reuseInterval: Self.reuseInterval)
        defer {
            stub.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        stub.accessTokenLifetime = 1
        let watcher = try TokenFileWatcher(file)
        try FileAuthenticationStore<OAuth2Token>(fileURL: file).save(try await Self.login(stub))
        let lockFile = file.path + ".lock"
        var workers = try (0..<4).map { _ in try Self.worker(stub, file: file) }
        var survivors: [ChildWorker] = []
        for worker in workers { #expect(await worker.waitForLine { $0 == "ready" }) }

        var recoveries: [TimeInterval] = []
        // Refreshes that ended before their process could be killed.
        var missed = 0
        while recoveries.count < Self.kills {
            try #require(missed < 10 * Self.kills, "the refresh lock's holder could never be killed mid-refresh")
            // The refresh token the next refresh presents, and the server rotates on receipt.
            let spent = watcher.token?.refreshToken
            let seen = stub.counters.tokenRequests
            guard
                let kill = try await Self.killTheHolderOfTheNextRefresh(
                    stub, after: seen, lockFile: lockFile, workers: workers)
            else {
                // The refresh ended before the lock could be seen: wait for the next one.
                missed += 1
                continue
            }
            let killedAt = kill.at
            _ = workers[kill.index].waitUntilExit()
            workers[kill.index] = try Self.worker(stub, file: file)
            guard watcher.token?.refreshToken == spent else {
                // The refresh had ended (and its token been saved) before the kill: not mid-refresh.
                missed += 1
                continue
            }
            // Recovered: a survivor refreshed with the spent token and saved what it got. Timed by
            // the watcher's thread: this task can be scheduled seconds late on a loaded machine,
            // and would count that wait as the survivors'.
            let recovered = await StubHarness.eventually {
                watcher.firstRead(after: killedAt, ofATokenOtherThan: spent) != nil
            }
            try #require(
                recovered,
                """
                no survivor recovered from kill \(recoveries.count + 1): \(stub.counters.reuseDetections) reuse \
                detections, survivors said \(workers.map { $0.lines.suffix(3) })
                """)
            let recoveredAt = try #require(watcher.firstRead(after: killedAt, ofATokenOtherThan: spent))
            recoveries.append(recoveredAt - killedAt)
        }
        for worker in workers {
            let result = try #require(await worker.finish(), "a survivor never reported")
            survivors.append(worker)
            let counts = result.compactMapValues(Int.init)
            #expect(counts["reauth", default: 0] == 0, "a survivor was logged out")
            for kind in ["notAuthenticated", "invalidGrant", "refreshTimedOut", "other"] {
                #expect(counts[kind, default: 0] == 0, "\(kind) in a survivor")
            }
            let longestWait = Double(result["longestWait"] ?? "") ?? .infinity
            #expect(longestWait <= Self.refreshTimeout + Self.schedulingSlack)
        }
        let figures = watcher.stop()
        let counters = stub.counters
        #expect(counters.reuseDetections == 0)
        #expect(figures.failures == 0, "the token file did not parse \(figures.failures) times")
        #expect(recoveries.allSatisfy { $0 < Self.refreshTimeout }, "recoveries \(recoveries)")

        let results = survivors.compactMap(\.result).map { $0.compactMapValues(Int.init) }
        let total = { (key: String) in results.reduce(0) { $0 + $1[key, default: 0] } }
        let sorted = recoveries.sorted()
        print(
            String(
                format: "crash-kill, reuse interval %.0f s: %d refresh-lock holders killed with SIGKILL mid-refresh "
                    + "(after the server rotated; %d more ended before the kill landed, not counted) · recovered in %.2f–%.2f s (median %.2f; refreshTimeout %.0f s) · "
                    + "%d reuse detections · %d refreshes within the reuse interval · the last 4 processes: "
                    + "%d requests OK, %d after a 401, 0 logged out · longest wait for a signature %.2f s · "
                    + "token file read %d times, %d unparsable",
                Self.reuseInterval, recoveries.count, missed, sorted.first ?? 0, sorted.last ?? 0,
                sorted[sorted.count / 2],
                Self.refreshTimeout, counters.reuseDetections, counters.reuseIntervalRefreshes,
                total("status200"), total("retried401"),
                survivors.compactMap { $0.result?["longestWait"].flatMap(Double.init) }.max() ?? 0,
                figures.reads, figures.failures))
    }

    @Test(.exclusive) func withStrictRotationEveryProcessEndsInTheReLoginPathOnce() async throws {
        let (stub, directory, file) = try Self.setUp(reuseInterval: 0)
        defer {
            stub.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let watcher = try TokenFileWatcher(file)
        let lockFile = file.path + ".lock"
        let store = try FileAuthenticationStore<OAuth2Token>(fileURL: file)
        var survivorsEnded = 0
        var longestWait: TimeInterval = 0
        for round in 1...Self.kills {
            // A fresh login whose access token has expired: every process must refresh at once.
            var token = try await Self.login(stub)
            token.expiresAt = Date().addingTimeInterval(-1)
            try store.save(token)
            let before = stub.counters
            let workers = try (0..<4).map { _ in try Self.worker(stub, file: file) }
            guard
                let index = try await Self.killTheHolderOfTheNextRefresh(
                    stub, after: before.tokenRequests, lockFile: lockFile, workers: workers)?.index
            else {
                Issue.record("round \(round): the refresh lock's holder was not a worker")
                for worker in workers { worker.kill() }
                continue
            }
            _ = workers[index].waitUntilExit()
            for (number, worker) in workers.enumerated() where number != index {
                #expect(
                    await worker.waitForLine { $0 == "relogin-checked" },
                    "round \(round): a survivor never re-logged in")
                let result = try #require(await worker.finish(), "round \(round): a survivor never reported")
                let counts = result.compactMapValues(Int.init)
                #expect(
                    counts["reauth"] == 1, "round \(round): onReauthenticationRequired \(counts["reauth"] ?? 0) times")
                #expect(counts["afterReauth"] == Self.requestsAfterReauthentication)
                #expect(counts["afterReauth.notAuthenticated"] == Self.requestsAfterReauthentication)
                longestWait = max(longestWait, Double(result["longestWait"] ?? "") ?? .infinity)
                survivorsEnded += 1
            }
            let after = stub.counters
            // The dead process's refresh and one replay that revoked the family; nothing more.
            #expect(after.tokenRequests - before.tokenRequests == 2, "round \(round): a retry loop")
            #expect(after.reuseDetections - before.reuseDetections == 1)
            #expect(watcher.token == nil, "round \(round): the revoked token is still stored")
        }
        let figures = watcher.stop()
        #expect(longestWait <= Self.refreshTimeout + Self.schedulingSlack)
        #expect(figures.failures == 0, "the token file did not parse \(figures.failures) times")
        let counters = stub.counters
        print(
            String(
                format: "crash-kill, strict rotation: %d refresh-lock holders killed with SIGKILL after the server "
                    + "rotated · %d reuse detections (one per kill: the spent token replayed) · %d survivors, each "
                    + "told to log in again exactly once, then %d requests each failed at once as notAuthenticated "
                    + "with no token request · longest wait for a signature %.2f s · token file read %d times, "
                    + "%d unparsable",
                Self.kills, counters.reuseDetections, survivorsEnded, Self.requestsAfterReauthentication,
                longestWait, figures.reads, figures.failures))
    }
}
#endif
