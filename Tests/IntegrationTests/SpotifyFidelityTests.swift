import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The library against the stub playing Spotify as documented: public clients with PKCE, throttling,
/// single-use refresh tokens, a Web API that takes bodies.
@Suite("Spotify as it behaves", .timeLimit(.minutes(5)))
struct SpotifyFidelityTests {
    private let example = SpotifyStub.Client.example

    /// A public client: no secret, so it proves itself with PKCE.
    private func publicClient(_ stub: SpotifyStub, session: URLSession = StubHarness.makeSession(timeout: 20))
        -> TokenEndpointClient
    {
        TokenEndpointClient(
            tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: example.id, session: session)
    }

    private func authorize(_ stub: SpotifyStub, session: URLSession = StubHarness.makeSession()) async throws -> (
        AuthorizationCodeRequest, String
    ) {
        let request = AuthorizationCodeRequest(
            authorizationEndpoint: stub.baseURL.appendingPathComponent("authorize"), clientID: example.id,
            redirectURI: example.redirectURIs[0], scope: "user-read-private")
        let (_, response) = try await session.data(for: URLRequest(url: request.url))
        let location = try #require((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location"))
        return (request, try request.code(fromRedirect: try #require(URL(string: location))))
    }

    @Test func aPublicClientLogsInWithS256AndRefreshesWithoutASecret() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = publicClient(stub)
        #expect(client.clientAuthentication == .none)
        let (request, code) = try await authorize(stub)
        let token = try await client.exchange(code: code, for: request)
        let refreshed = try await client.refresh(token)
        #expect(refreshed.accessToken != token.accessToken)
        #expect(stub.counters.authorizationCodeGrants == 1 && stub.counters.refreshTokenGrants == 1)

        // Without PKCE a public client proves nothing: its code is refused as invalid_client.
        let plainCode = try await StubHarness.authorizationCode(stub, session: StubHarness.makeSession())
        await #expect {
            _ = try await client.exchange(code: plainCode, redirectURI: example.redirectURIs[0])
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let answer) = error else { return false }
            return answer.code == .invalidClient && answer.status == 400
        }
        // And a wrong verifier is refused.
        let (other, otherCode) = try await authorize(stub)
        await #expect {
            _ = try await client.exchange(
                code: otherCode, redirectURI: other.redirectURI, codeVerifier: request.codeVerifier)
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let answer) = error else { return false }
            return answer.code == .invalidGrant
        }
    }

    @Test(.exclusive) func aThrottledRefreshWaitsOutRetryAfterAndFailsMeanwhileWithTheTypedError() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 20)
        let client = StubHarness.exampleClient(stub, session: session, requestTimeout: 30)
        var token = try await StubHarness.logIn(stub, through: client)
        token.expiresAt = Date().addingTimeInterval(-1)
        stub.expireAccessTokens()
        stub.injectFaults(.rateLimited(retryAfter: 1))
        stub.resetCounters()
        let closure = RefreshingRequestClosure(client: client, store: InMemoryAuthenticationStore(token))
        let me = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        // Four more requests as soon as the first is refused, from the thread that refuses it: a
        // task can be resumed after the server's second has passed on a loaded machine.
        let refusals = Completions<Result<URLRequest, any Error>>()
        closure.authorize(me) { first in
            refusals.record(0, first)
            for index in 1..<5 {
                closure.authorize(me) { refusals.record(index, $0) }
            }
        }
        await refusals.wait(for: 5)
        #expect(refusals.duplicates.isEmpty)
        for index in 0..<5 {
            guard
                case .failure(OAuth2Error.tokenEndpoint(let answer)) =
                    refusals.results[index], answer.status == 429, answer.retryAfter == 1
            else {
                Issue.record("request \(index): \(String(describing: refusals.results[index]?.map(\.url)))")
                continue
            }
        }
        // Within the second the server asked for, nothing more went to it.
        #expect(stub.counters.tokenRequests == 1)
        try await Task.sleep(nanoseconds: 1_100_000_000)
        let (_, response) = try await closure.data(for: me, using: session)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(stub.counters.tokenRequests == 2)
    }

    @Test func theWebAPIThrottlesWith429AndRetryAfterAtTheRateKnob() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        let tokens = try await StubHarness.login(stub, session: session)
        stub.rateLimit = SpotifyStub.RateLimit(requestsPerSecond: 2, retryAfter: 7)
        var statuses: [Int] = []
        var retryAfter: String?
        let started = ProcessInfo.processInfo.systemUptime
        for _ in 0..<4 {
            let exchange = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken)
            statuses.append(exchange.status)
            if exchange.status == 429 { retryAfter = exchange.header("Retry-After") }
        }
        // The window is one second long; on a loaded machine four requests may straddle two
        // windows, so the exact split is checked only when they fitted in one (the counting
        // itself is checked with injected times in StubRateWindowTests).
        if ProcessInfo.processInfo.systemUptime - started < 0.9 {
            #expect(statuses.filter { $0 == 200 }.count == 2 && statuses.filter { $0 == 429 }.count == 2)
            #expect(stub.counters.rateLimited == 2)
        }
        #expect(Array(statuses.prefix(2)) == [200, 200])
        #expect(retryAfter == nil || retryAfter == "7")
        #expect(stub.counters.rateLimited == statuses.filter { $0 == 429 }.count)
    }

    @Test func aReusedSingleUseRefreshTokenSendsThatClosureToTheReLoginPathOnce() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.singleUseRefreshTokens = true
        let session = StubHarness.makeSession(timeout: 20)
        let client = StubHarness.exampleClient(stub, session: session, requestTimeout: 30)
        var token = try await StubHarness.logIn(stub, through: client)
        token.expiresAt = Date().addingTimeInterval(-1)
        // Two stores that do not know of each other hold the same single-use refresh token.
        let first = RefreshingRequestClosure(client: client, store: InMemoryAuthenticationStore(token))
        let calls = Protected(0)
        let store = InMemoryAuthenticationStore(token)
        let second = RefreshingRequestClosure(
            client: client, store: store, onReauthenticationRequired: { _ in calls.withLock { $0 += 1 } })
        let me = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        _ = try await first.authorize(me)
        for _ in 0..<3 {
            await #expect {
                _ = try await second.authorize(me)
            } throws: { error in
                (error as? any RefreshFailure)?.requiresReauthentication == true
            }
        }
        #expect(calls.current == 1)
        #expect(store.load() == nil)
        #expect(stub.counters.reuseDetections == 1)
    }

    @Test func aPutBodyIsSentAgainUnchangedAfterA401AndAStreamedBodyIsNotRetried() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 20)
        let client = StubHarness.exampleClient(stub, session: session, requestTimeout: 30)
        // The app believes the token is good; the server has expired it: the first PUT gets a 401.
        let token = try await StubHarness.logIn(stub, through: client)
        stub.expireAccessTokens()
        let closure = RefreshingRequestClosure(client: client, store: InMemoryAuthenticationStore(token))
        var put = URLRequest(url: stub.baseURL.appendingPathComponent("v1/playlists/example-playlist-1"))
        put.httpMethod = "PUT"
        put.setValue("application/json", forHTTPHeaderField: "Content-Type")
        put.httpBody = Data(#"{"name":"Renamed after a 401"}"#.utf8)
        let (data, response) = try await closure.data(for: put, using: session)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(answer?["name"] as? String == "Renamed after a 401")
        #expect(stub.counters.apiRequestsByStatus[401] == 1 && stub.counters.refreshTokenGrants == 1)

    }

    @Test func aRequestWithABodyStreamIsNotRetriedAfterA401() async throws {
        // The stub takes no chunked bodies (URLSession sends a stream chunked): a plain listener
        // answering 401 to everything stands in for the API.
        let api = try LoopbackServer { _ in
            .answer(status: 401, headers: ["WWW-Authenticate": "Bearer error=\"invalid_token\""], body: Data())
        }
        defer { api.stop() }
        let refreshesBefore = CountedAuthentication.refreshes.current
        let closure = RefreshingRequestClosure(find: { CountedAuthentication(accessToken: "stream-token") })
        var streaming = URLRequest(url: api.baseURL.appendingPathComponent("v1/playlists/p"))
        streaming.httpMethod = "PUT"
        streaming.httpBodyStream = InputStream(data: Data(#"{"name":"streamed"}"#.utf8))
        let (_, response) = try await closure.data(for: streaming, using: .shared)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(api.requests.count == 1)
        #expect(CountedAuthentication.refreshes.current == refreshesBefore)
    }
}
