import Foundation
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub lifecycle", .timeLimit(.minutes(5)))
struct SpotifyStubLifecycleTests {
    @Test func startBindsALoopbackPortChosenByTheSystem() throws {
        let stub = SpotifyStub()
        #expect(stub.port == 0)

        try stub.start()
        defer { stub.stop() }

        #expect(stub.port != 0)
        #expect(stub.baseURL.absoluteString == "http://127.0.0.1:\(stub.port)")
    }

    @Test func startingTwiceThrows() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }

        #expect(throws: SpotifyStub.ServerError.alreadyRunning) { try stub.start() }
    }

    @Test func aTakenPortMakesStartThrow() throws {
        let first = try StubHarness.startedStub()
        defer { first.stop() }
        let second = SpotifyStub(port: first.port)

        #expect(throws: SpotifyStub.ServerError.self) { try second.start() }
    }

    @Test func stopIsIdempotentAndClosesIdleConnections() async throws {
        let stub = try StubHarness.startedStub()
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        try client.send("GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try client.readResponse()

        stub.stop()
        stub.stop()

        #expect(stub.counters.liveConnections == 0)
        #expect(client.serverClosed())
        #expect(throws: (any Error).self) { try StubHarness.RawClient(port: stub.port) }
    }

    @Test(.exclusive, .timeLimit(.minutes(5))) func stopWhileRequestsAreDelayedReleasesThem() async throws {
        let stub = try StubHarness.startedStub()
        // Both far beyond the time limit: only the stop can end the request in time.
        stub.tokenLatency = 600
        let session = StubHarness.makeSession(timeout: 600)
        defer { session.invalidateAndCancel() }
        let request = StubHarness.tokenRequest(stub, [("grant_type", "refresh_token"), ("refresh_token", "x")])

        let outcome = Task { try await StubHarness.send(request, on: session) }
        #expect(await StubHarness.eventually { stub.counters.tokenRequests == 1 })
        stub.stop()

        await #expect(throws: (any Error).self) { try await outcome.value }
        #expect(stub.counters.liveConnections == 0)
    }

    @Test func restartServesTheSamePortAndKeepsTokens() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        let tokens = try await StubHarness.login(stub, session: session)
        session.invalidateAndCancel()
        let port = stub.port

        stub.stop()
        try stub.start()

        #expect(stub.port == port)
        let again = StubHarness.makeSession()
        defer { again.invalidateAndCancel() }
        let me = try await StubHarness.get("/v1/me", on: stub, session: again, bearer: tokens.accessToken)
        #expect(me.status == 200)
        #expect(stub.counters.authorizationCodeGrants == 1)
    }

    @Test func knobsHaveTheDocumentedDefaultsAndClampNonsense() {
        let stub = SpotifyStub()

        #expect(stub.accessTokenLifetime == 3600)
        #expect(stub.authorizationCodeLifetime == 600)
        #expect(stub.rotatesRefreshTokens == false)
        #expect(stub.detectsRefreshTokenReuse == true)
        #expect(stub.tokenLatency == 0)
        #expect(stub.counters == Counters())
        stub.accessTokenLifetime = -5
        stub.tokenLatency = .nan
        #expect(stub.accessTokenLifetime == 0)
        #expect(stub.tokenLatency == 0)
    }

    @Test func theExampleClientIsRegisteredByDefault() {
        #expect(SpotifyStub.Client.example.id == "example-client")
        #expect(SpotifyStub.Client.example.secret == "example-secret")
        #expect(
            SpotifyStub.Client.example.redirectURIs == [
                "refreshqueue-example://callback", "http://127.0.0.1/callback", "http://[::1]/callback",
            ])
    }

    @Test func printingAClientNeverShowsItsSecret() {
        let client = SpotifyStub.Client(id: "id", secret: "s3cr3t-value", redirectURIs: ["app://cb"])

        for text in [String(describing: client), String(reflecting: client), "\(client)"] {
            #expect(!text.contains("s3cr3t-value"))
            #expect(text.contains("id"))
        }
    }
}
