import Foundation
import Testing

@testable import RefreshQueue
@testable import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in token-endpoint client against the stub's `/api/token`.
@Suite("TokenEndpointClient over HTTP", .timeLimit(.minutes(5)))
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
            code: code, redirectURI: SpotifyStub.Client.example.redirectURIs[0])
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

    /// A token's life is counted from when its request was sent: the server issued it after that,
    /// so a slow answer must not make it look fresher than it is (with short-lived tokens, requests
    /// signed near the end of one expired in flight).
    @Test func aTokensLifeIsCountedFromWhenItsRequestWasSentNotFromItsSlowAnswer() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        stub.tokenLatency = 0.5
        let sent = Date()
        let refreshed = try await client(stub).refresh(token)
        let answered = Date()
        #expect(answered.timeIntervalSince(sent) >= 0.5)
        #expect(refreshed.issuedAt >= sent.addingTimeInterval(-0.001))
        #expect(
            refreshed.issuedAt < sent.addingTimeInterval(0.25),
            "issued \(refreshed.issuedAt.timeIntervalSince(sent)) s after the request was sent")
        let lifetime = try #require(refreshed.lifetime)
        #expect(try #require(refreshed.expiresAt) <= sent.addingTimeInterval(lifetime + 0.25))
    }

    @Test(.exclusive, .timeLimit(.minutes(5)), arguments: ["latency", "hang"])
    func aTokenRequestEndsAtTheClientsOwnTimeoutHoweverSlowTheServer(slowness: String) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await loggedIn(stub)
        if slowness == "hang" { stub.injectFaults(.hang) } else { stub.tokenLatency = 600 }
        // A session that would wait ten minutes: only the client's own deadline ends it in time.
        let patient = URLSessionConfiguration.ephemeral
        patient.timeoutIntervalForRequest = 600
        patient.timeoutIntervalForResource = 600
        var slowClient = client(stub)
        slowClient.session = URLSession(configuration: patient)
        slowClient.requestTimeout = 0.5
        await #expect {
            _ = try await slowClient.refresh(token)
        } throws: { error in
            guard case OAuth2Error.transport(let underlying) = error else { return false }
            return underlying.code == .timedOut
        }
    }

    @Test func aPKCES256LoginRoundTripsWithTheStubAndAWrongVerifierIsRefused() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        let example = SpotifyStub.Client.example
        func authorize() async throws -> (AuthorizationCodeRequest, String) {
            let request = AuthorizationCodeRequest(
                authorizationEndpoint: stub.baseURL.appendingPathComponent("authorize"), clientID: example.id,
                redirectURI: example.redirectURIs[0], scope: "user-read-private")
            let (_, response) = try await session.data(for: URLRequest(url: request.url))
            let location = try #require((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location"))
            return (request, try request.code(fromRedirect: try #require(URL(string: location))))
        }
        let (request, code) = try await authorize()
        let token = try await client(stub).exchange(code: code, for: request)
        #expect(token.refreshToken != nil)

        let (other, otherCode) = try await authorize()
        await #expect {
            _ = try await client(stub).exchange(
                code: otherCode, redirectURI: other.redirectURI, codeVerifier: request.codeVerifier)
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let answer) = error else { return false }
            return answer.code == .invalidGrant
        }
        // A failed attempt does not consume the code: the right verifier still works.
        _ = try await client(stub).exchange(code: otherCode, for: other)
        #expect(stub.counters.authorizationCodeGrants == 2)
    }

    @Test func theStubRefusesAPlainCodeChallengeAsSpotifyDoes() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let example = SpotifyStub.Client.example
        var components = URLComponents(
            url: stub.baseURL.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "client_id", value: example.id), URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: example.redirectURIs[0]), URLQueryItem(name: "state", value: "s"),
            URLQueryItem(name: "code_challenge", value: String(repeating: "v", count: 43)),
            URLQueryItem(name: "code_challenge_method", value: "plain"),
        ]
        let (_, response) = try await StubHarness.makeSession().data(for: URLRequest(url: components.url!))
        let location = try #require((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location"))
        #expect(location.contains("error=invalid_request"))
        #expect(!location.contains("code="))
    }

    @Test func theStubsSHA256AgreesWithTheLibrarysForEveryLengthAroundTheBlockSize() throws {
        // Two SHA-256 implementations written apart: the stub's checks the library's.
        for length in 0...200 {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            #expect(S256.digest(message) == SHA256.hash(message), "length \(length)")
        }
        #expect(
            S256.digest(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
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

    @Test(arguments: [SpotifyStub.InvalidClientAnswer.badRequest, .basicChallenge])
    func aWrongClientSecretIsInvalidClientAndDoesNotHang(answer: SpotifyStub.InvalidClientAnswer) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.invalidClientAnswer = answer
        let token = try await loggedIn(stub)
        await #expect {
            try await client(stub, secret: "wrong-secret").refresh(token)
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let endpointError) = error else { return false }
            // Spotify's 400 JSON, or the RFC's 401 challenge (refused by the client, not hung on).
            return endpointError.code == .invalidClient && endpointError.status == (answer == .badRequest ? 400 : 401)
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
