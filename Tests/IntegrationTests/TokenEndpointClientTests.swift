import Foundation
import RefreshQueue
import SpotifyStub
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in token-endpoint client against the stub's `/api/token`.
@Suite("TokenEndpointClient over HTTP")
struct TokenEndpointClientTests {
    private func client(
        _ stub: SpotifyStub, secret: String = SpotifyStub.Client.example.secret,
        method: ClientAuthenticationMethod = .basic
    ) -> TokenEndpointClient {
        TokenEndpointClient(
            tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: SpotifyStub.Client.example.id,
            clientSecret: secret, clientAuthentication: method)
    }

    private func loggedIn(_ stub: SpotifyStub, method: ClientAuthenticationMethod = .basic) async throws -> OAuth2Token
    {
        let code = try await StubHarness.authorizationCode(stub, session: StubHarness.makeSession())
        return try await client(stub, method: method).exchange(
            code: code, redirectURI: SpotifyStub.Client.example.redirectURIs[0], codeVerifier: "verifier-0123456789")
    }

    @Test(arguments: [ClientAuthenticationMethod.basic, .requestBody])
    func theCodeGrantAndTheRefreshGrantWorkWithEitherClientAuthentication(method: ClientAuthenticationMethod)
        async throws
    {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub, method: method)
        #expect(token.isBearer)
        #expect(token.refreshToken != nil)
        #expect(try #require(token.lifetime) > 3000)
        let refreshed = try await client(stub, method: method).refresh(token)
        #expect(refreshed.accessToken != token.accessToken)
        // Without rotation the server sends no new refresh token: the old one is kept.
        #expect(refreshed.refreshToken == token.refreshToken)
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test(.exclusive, arguments: ["latency", "hang"])
    func aTokenRequestEndsAtTheClientsOwnTimeoutHoweverSlowTheServer(slowness: String) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        if slowness == "hang" { stub.injectFaults(.hang) } else { stub.tokenLatency = 30 }
        var slowClient = client(stub)
        slowClient.requestTimeout = 0.5
        let started = ProcessInfo.processInfo.systemUptime
        await #expect {
            _ = try await slowClient.refresh(token)
        } throws: { error in
            guard case OAuth2Error.transport(let underlying) = error else { return false }
            return underlying.code == .timedOut
        }
        // Not the session's 60 s resource timeout, which Linux does not enforce anyway.
        #expect(ProcessInfo.processInfo.systemUptime - started < 10)
    }

    @Test func withRotationTheNewRefreshTokenReplacesTheOldOne() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        let token = try await loggedIn(stub)
        let refreshed = try await client(stub).refresh(token)
        #expect(refreshed.refreshToken != nil)
        #expect(refreshed.refreshToken != token.refreshToken)
        _ = try await client(stub).refresh(refreshed)
        #expect(stub.counters.reuseDetections == 0)
    }

    @Test func aWrongClientSecretIsInvalidClientAndDoesNotHang() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        await #expect {
            try await client(stub, secret: "wrong-secret").refresh(token)
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let endpointError) = error else { return false }
            return endpointError.code == .invalidClient && endpointError.status == 401
                && !String(describing: error).contains("wrong-secret")
                && (error as? OAuth2Error)?.requiresReauthentication == false
        }
    }

    @Test func invalidGrantSaysTheUserMustLogInAgain() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        stub.injectFaults(.invalidGrant)
        await #expect {
            try await client(stub).refresh(token)
        } throws: { error in
            (error as? OAuth2Error)?.requiresReauthentication == true
        }
    }

    @Test func serviceUnavailableCarriesRetryAfterAndMalformedJSONIsMalformed() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        stub.injectFaults(.serviceUnavailable(retryAfter: 7))
        await #expect {
            try await client(stub).refresh(token)
        } throws: { error in
            guard case OAuth2Error.server(503, let retryAfter) = error else { return false }
            return retryAfter == 7 && (error as? OAuth2Error)?.requiresReauthentication == false
        }
        stub.injectFaults(.malformedJSON)
        await #expect {
            try await client(stub).refresh(token)
        } throws: { error in
            if case OAuth2Error.malformedResponse = error { return true }
            return false
        }
    }

    @Test func aTokenWithoutRefreshTokenCannotBeRefreshed() async {
        let stub = SpotifyStub()
        await #expect {
            try await client(stub).refresh(OAuth2Token(accessToken: "a", expiresIn: 60))
        } throws: { error in
            (error as? OAuth2Error)?.requiresReauthentication == true
        }
    }
}
