import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How long the soak runs: `SOAK_SECONDS`, 5 s unless set.
enum SoakSettings {
    static let seconds = ProcessInfo.processInfo.environment["SOAK_SECONDS"].flatMap(Double.init) ?? 5
    static let timeLimitMinutes = Int(seconds / 60) + 5
}

/// Requests without pause against tokens that live 0.2 s, with rotation and reuse detection, 5 %
/// of token requests failing at random: 64 concurrent loops over two closures that share a token
/// file in this process, and a child process with 16 more on the same file. `SOAK_SECONDS`
/// (default 5) sets the length: `SOAK_SECONDS=60 swift test --filter Soak`.
///
/// Checked: every request ends, exactly once; no refresh token is ever presented twice (the stub
/// would count a reuse and revoke the family); nobody is logged out; the refreshes stay within the
/// band the token lifetime implies; the heap bytes in use grow from the warm-up to the end by no
/// more than `allowedGrowth`, here and in the child. Prints its figures, resident memory among them.
///
/// The leak check counts heap bytes in use, not resident memory. Under the thread sanitizer,
/// resident memory grows with the sanitizer's shadow of every page touched and its records of
/// threads and locks: a child once went from 81 to 90 MiB in the five seconds, every request ended.
/// Without it, resident memory also counts thread stacks and the free space glibc's arenas keep.
@Suite("Soak", .timeLimit(.minutes(SoakSettings.timeLimitMinutes)))
struct SoakTests {
    static let seconds = SoakSettings.seconds
    static let lifetime = 0.2
    static let concurrency = 64
    static let childConcurrency = 16
    /// Resident memory is compared from this moment on: once the pools, caches and connections of
    /// the first requests exist.
    static let warmUp = min(max(1, seconds * 0.2), 10)

    @Test(.exclusive) func requestsWithoutPauseAgainstShortLivedRotatingTokensWithRandomFaults() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        stub.detectsRefreshTokenReuse = true
        stub.accessTokenLifetime = Self.lifetime
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token.json")
        let client = StubHarness.exampleClient(stub, requestTimeout: 2)
        try FileAuthenticationStore<OAuth2Token>(fileURL: file).save(try await StubHarness.logIn(stub, through: client))
        stub.resetCounters()
        stub.randomFaults = SpotifyStub.RandomFaults(
            probability: 0.05,
            faults: [
                .internalServerError, .serviceUnavailable(retryAfter: 0), .malformedJSON, .truncatedBody,
                .closeWithoutResponse,
            ],
            seed: 20)

        let tally = Tally()
        let workloads = try (0..<2).map { _ in
            Workload(
                closure: RefreshingRequestClosure(
                    client: client,
                    store: try FileAuthenticationStore<OAuth2Token>(fileURL: file),
                    options: .init(
                        refreshTimeout: 3,
                        refreshWindow: .unlimited,
                        requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true }
                    ),
                    onReauthenticationRequired: { _ in tally.count("reauth") }
                ),
                url: stub.baseURL.appendingPathComponent("v1/me"), tally: tally)
        }
        let child = try ChildWorker([
            "soak", "--base", stub.baseURL.absoluteString, "--file", file.path, "--seconds", String(Self.seconds),
            "--concurrency", String(Self.childConcurrency), "--warm-up", String(Self.warmUp),
            "--refresh-timeout", "3", "--request-timeout", "2",
        ])
        let memoryAfterWarmUp = Protected(Memory.zero)
        async let measured: Void = {
            // check-apple: 32-bit safe (warmUp is at most 10 s: see its declaration)
            try? await Task.sleep(nanoseconds: UInt64(Self.warmUp * 1e9))
            memoryAfterWarmUp.withLock { $0 = Memory.now() }
        }()
        await Workload.run(workloads, concurrency: Self.concurrency, seconds: Self.seconds)
        await measured
        let memoryAtEnd = Memory.now()
        let childResult = try #require(await child.finish(timeout: Self.seconds + 120), "the child never reported")
        #expect(child.waitUntilExit() == 0)
        let counters = stub.counters
        let here = tally.counts
        let there = childResult.compactMapValues(Int.init)

        // Every request ended, exactly once, here and in the child.
        #expect(here["started"] == here["ended"], "lost completions here")
        #expect(here["doubles", default: 0] == 0, "completions called twice here")
        #expect(there["started"] == there["ended"], "lost completions in the child")
        #expect(there["doubles", default: 0] == 0, "completions called twice in the child")
        // Never a refresh token presented twice, nobody logged out, every error typed.
        #expect(counters.reuseDetections == 0)
        for (name, counts) in [("here", here), ("in the child", there)] {
            #expect(counts["reauth", default: 0] == 0, "logged out \(name)")
            #expect(counts["notAuthenticated", default: 0] == 0, "logged out \(name)")
            #expect(counts["other", default: 0] == 0, "untyped errors \(name)")
        }
        // A refresh ahead starts once half the lifetime is left: about two refreshes per lifetime,
        // fewer while faults or a slow machine delay them, never more (a second refresh of one
        // token would also be a reuse).
        let lifetimes = Self.seconds / Self.lifetime
        let perLifetime = Double(counters.refreshTokenGrants) / lifetimes
        #expect(
            perLifetime >= 0.5 && perLifetime <= 2.2,
            "\(counters.refreshTokenGrants) refreshes in \(lifetimes) token lifetimes")
        // Heap in use: no more than the allowed growth over the warm-up, in both processes.
        let warm = memoryAfterWarmUp.current
        let childWarm = Memory(heap: there["heapWarm", default: 0], resident: there["rssWarm", default: 0])
        let childEnd = Memory(heap: there["heapEnd", default: 0], resident: there["rssEnd", default: 0])
        #if canImport(Glibc) || canImport(Darwin)
        // Where the allocator tells, a figure of 0 means it was not read: every leak would pass.
        #expect(warm.heap > 0 && childWarm.heap > 0, "no heap figures: the leak check cannot fail")
        #endif
        #expect(memoryAtEnd.heap - warm.heap <= Self.allowedGrowth(from: warm.heap), "heap in use grew here")
        #expect(
            childEnd.heap - childWarm.heap <= Self.allowedGrowth(from: childWarm.heap), "heap in use grew in the child")

        let requests = here["ended", default: 0] + there["ended", default: 0]
        let ok = here["status200", default: 0] + there["status200", default: 0]
        let failures = (["status401", "status0"] + ErrorKind.failures)
            .map { kind in (kind, here[kind, default: 0] + there[kind, default: 0]) }
            .filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        let lost =
            here["started", default: 0] - here["ended", default: 0] + there["started", default: 0]
            - there["ended", default: 0]
        let doubled = here["doubles", default: 0] + there["doubles", default: 0]
        let mebibyte = 1_048_576.0
        print(
            String(
                format: "soak: %.0f s · %d requests (%d here over 2 closures, %d in the child) · %d OK "
                    + "(%d after a 401 and reauthorize) · failed: %@ · %d refreshes (%.2f per token lifetime) · %d faults in %d token requests · "
                    + "%d reuse detections · %d lost · %d doubled · longest request %.2f s, "
                    + "longest wait for a signature %.2f s (refreshTimeout 3 s) · "
                    + "heap in use here %.1f → %.1f MiB, child %.1f → %.1f MiB · "
                    + "resident memory here %.1f → %.1f MiB, child %.1f → %.1f MiB",
                Self.seconds, requests, here["ended", default: 0], there["ended", default: 0], ok,
                here["retried401", default: 0] + there["retried401", default: 0],
                failures.isEmpty ? "none" : failures, counters.refreshTokenGrants, perLifetime,
                counters.faultsInjected, counters.tokenRequests, counters.reuseDetections,
                lost, doubled, max(tally.longest, Double(childResult["longest"] ?? "0") ?? 0),
                max(tally.longestWait, Double(childResult["longestWait"] ?? "0") ?? 0),
                Double(warm.heap) / mebibyte, Double(memoryAtEnd.heap) / mebibyte,
                Double(childWarm.heap) / mebibyte, Double(childEnd.heap) / mebibyte,
                Double(warm.resident) / mebibyte, Double(memoryAtEnd.resident) / mebibyte,
                Double(childWarm.resident) / mebibyte, Double(childEnd.resident) / mebibyte))
    }

    /// How much the heap in use may grow from the warm-up to the end without counting as a leak: a
    /// tenth of it, plus 2 MiB for what the tests that run beside the soak in this process hold at
    /// that moment. A leak of a kilobyte per request passes 2 MiB within the first few thousand
    /// requests after the warm-up.
    static func allowedGrowth(from warm: Int) -> Int { warm / 10 + (2 << 20) }

    /// Heap bytes in use and resident bytes at one moment.
    struct Memory: Sendable {
        var heap: Int
        var resident: Int

        static let zero = Memory(heap: 0, resident: 0)
        static func now() -> Memory { Memory(heap: HeapInUse.bytes(), resident: ResidentMemory.bytes()) }
    }
}
