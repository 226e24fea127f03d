import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One token file shared by several closures and processes, against the stub with rotating
/// refresh tokens and reuse detection: exactly one refresh, never a replayed refresh token.
@Suite("Shared token file", .timeLimit(.minutes(5)))
struct SharedTokenFileTests {
    /// A stub with rotation on, and a token file holding an expired token for it.
    private struct Fixture {
        let stub: SpotifyStub
        let client: TokenEndpointClient
        let store: FileAuthenticationStore<OAuth2Token>
        let directory: URL

        init() async throws {
            stub = try StubHarness.startedStub()
            stub.rotatesRefreshTokens = true
            stub.detectsRefreshTokenReuse = true
            client = TokenEndpointClient(
                tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: SpotifyStub.Client.example.id,
                clientSecret: SpotifyStub.Client.example.secret, session: StubHarness.makeSession(timeout: 20))
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "shared-token-\(UUID().uuidString)")
            store = try FileAuthenticationStore<OAuth2Token>(fileURL: directory.appendingPathComponent("token.json"))
            let code = try await StubHarness.authorizationCode(stub, session: StubHarness.makeSession())
            var token = try await client.exchange(code: code, redirectURI: SpotifyStub.Client.example.redirectURIs[0])
            token.expiresAt = Date().addingTimeInterval(-1)
            try store.save(token)
            stub.expireAccessTokens()
            stub.resetCounters()
        }

        func closure(
            refreshTimeout: TimeInterval = 30, onReauthenticationRequired: (@Sendable (any Error) -> Void)? = nil
        ) -> RefreshingRequestClosure<OAuth2Authentication> {
            RefreshingRequestClosure(
                client: client,
                store: try! FileAuthenticationStore<OAuth2Token>(fileURL: store.fileURL),
                options: .init(
                    refreshTimeout: refreshTimeout,
                    requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true }
                ),
                onReauthenticationRequired: onReauthenticationRequired
            )
        }

        func tearDown() {
            stub.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test(.exclusive) func closuresWithTheirOwnStoreOnOneFileRefreshOnceBetweenThem() async throws {
        let fixture = try await Fixture()
        defer { fixture.tearDown() }
        let closures = (0..<4).map { _ in fixture.closure() }
        let session = StubHarness.makeSession(timeout: 20)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<800 {
                let closure = closures[index % closures.count]
                group.addTask {
                    let request = URLRequest(url: fixture.stub.baseURL.appendingPathComponent("v1/me"))
                    let (_, response) = try await closure.data(for: request, using: session)
                    return (response as? HTTPURLResponse)?.statusCode ?? 0
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 800)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(fixture.stub.counters.refreshTokenGrants == 1)
        #expect(fixture.stub.counters.reuseDetections == 0)
    }

    @Test(.exclusive) func aTokenEndpointSlowerThanTwiceTheTimeoutStillGetsOneRefreshFromTwoClosuresOnOneFile()
        async throws
    {
        let fixture = try await Fixture()
        defer { fixture.tearDown() }
        let timeout = 0.4
        fixture.stub.tokenLatency = 2.5 * timeout
        let closures = [fixture.closure(refreshTimeout: timeout), fixture.closure(refreshTimeout: timeout)]
        let session = StubHarness.makeSession(timeout: 20)
        // Waves of requests from both closures, while the refresh takes longer than every timeout
        // and after: requests may time out, but nobody sends the refresh token a second time.
        var lastWave: [Int] = []
        for _ in 0..<30 {
            lastWave = await withTaskGroup(of: Int.self) { group in
                for index in 0..<10 {
                    let closure = closures[index % closures.count]
                    group.addTask {
                        let request = URLRequest(url: fixture.stub.baseURL.appendingPathComponent("v1/me"))
                        let response = try? await closure.data(for: request, using: session).1
                        return (response as? HTTPURLResponse)?.statusCode ?? 0
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            if lastWave.allSatisfy({ $0 == 200 }) { break }
        }
        #expect(lastWave.allSatisfy { $0 == 200 })
        // Exactly one request carried the refresh token, and it was not replayed.
        #expect(fixture.stub.counters.tokenRequests == 1)
        #expect(fixture.stub.counters.refreshTokenGrants == 1)
        #expect(fixture.stub.counters.reuseDetections == 0)
        #expect(fixture.stub.counters.apiRequestsByStatus[401] == nil)
    }

    @Test(.exclusive) func fourProcessesWithTwoHundredRequestsEachRefreshOnceBetweenThem() async throws {
        let example = try #require(BuiltExecutable.url(named: "Example"), "build it first: swift build")
        let fixture = try await Fixture()
        defer { fixture.tearDown() }
        let processes = try (1...4).map { index in
            let process = Process()
            process.executableURL = example
            process.arguments = [
                "--worker", fixture.stub.baseURL.absoluteString, fixture.store.fileURL.path, String(index),
                "--requests", "200",
            ]
            process.standardOutput = FileHandle.nullDevice
            let exited = Completions<Int32>()
            process.terminationHandler = { exited.record(0, $0.terminationStatus) }
            try process.run()
            return exited
        }
        for exited in processes {
            await exited.wait(for: 1)
            #expect(exited.results[0] == 0)
        }
        let counters = fixture.stub.counters
        #expect(counters.refreshTokenGrants == 1)
        #expect(counters.reuseDetections == 0)
        #expect(counters.apiRequestsByStatus[200] == 800)
    }

    @Test func invalidGrantClearsTheFileAndCallsTheHandlerOnce() async throws {
        let fixture = try await Fixture()
        defer { fixture.tearDown() }
        fixture.stub.injectFaults(.invalidGrant)
        let calls = LoadOnceCounter()
        let closure = fixture.closure(onReauthenticationRequired: { _ in calls.increment() })
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        _ = try await closure.authorize(
                            URLRequest(url: fixture.stub.baseURL.appendingPathComponent("v1/me")))
                        return false
                    } catch {
                        return (error as? any RefreshFailure)?.requiresReauthentication == true
                    }
                }
            }
            return await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(failures == 50)
        #expect(calls.value == 1)
        #expect(fixture.store.load() == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.store.fileURL.path))
    }
}

/// Counts calls from any thread.
final class LoadOnceCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
