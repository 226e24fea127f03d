import Foundation
import SpotifyStub
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub /api/token", .timeLimit(.minutes(2)))
struct SpotifyStubTokenTests {
    private let redirectURI = "refreshqueue-example://callback"

    @Test func codeExchangeIssuesTokensShapedLikeSpotifys() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let code = try await StubHarness.authorizationCode(
            stub, session: session, scope: "user-read-private playlist-read-private")

        let exchange = try await StubHarness.exchange(stub, code: code, redirectURI: redirectURI, on: session)

        #expect(exchange.status == 200)
        #expect(exchange.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(exchange.header("Cache-Control") == "no-store")
        let json = try #require(exchange.json)
        #expect(json["token_type"] as? String == "Bearer")
        #expect(json["scope"] as? String == "user-read-private playlist-read-private")
        #expect((json["access_token"] as? String)?.isEmpty == false)
        #expect((json["refresh_token"] as? String)?.isEmpty == false)
        #expect(exchange.text.contains("\"expires_in\":3600,") || exchange.text.contains("\"expires_in\":3600}"))
        #expect(stub.counters == Counters(authorizationCodeGrants: 1, tokenRequests: 1, liveConnections: 1))
    }

    @Test func aFractionalLifetimeIsSentAsAFractionalExpiresIn() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.accessTokenLifetime = 0.3
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let tokens = try await StubHarness.login(stub, session: session)

        #expect(tokens.expiresIn == 0.3)
    }

    @Test func anAuthorizationCodeWorksExactlyOnce() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let code = try await StubHarness.authorizationCode(stub, session: session)
        let request = StubHarness.tokenRequest(
            stub,
            [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]
        )

        let first = try await StubHarness.send(request, on: session)
        let second = try await StubHarness.send(request, on: session)

        #expect(first.status == 200)
        #expect(second.status == 400)
        #expect(second.json?["error"] as? String == "invalid_grant")
        #expect(stub.counters.authorizationCodeGrants == 1)
        #expect(stub.counters.tokenRequests == 2)
    }

    @Test func aCodeMustBeRedeemedWithTheRedirectURIItWasIssuedFor() async throws {
        let client = SpotifyStub.Client(
            id: "two-redirects",
            secret: "s3cret",
            redirectURIs: ["app://one", "app://two"]
        )
        let stub = try StubHarness.startedStub(clients: [client])
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let authorize = try await StubHarness.get(
            StubHarness.authorizePath(clientID: "two-redirects", redirectURI: "app://one"),
            on: stub,
            session: session
        )
        let location = try #require(authorize.header("Location"))
        let code = try #require(try StubHarness.queryItems(of: location)["code"])
        let authentication = StubHarness.ClientAuthentication.basic(id: "two-redirects", secret: "s3cret")

        let mismatch = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "app://two")],
                authentication: authentication
            ),
            on: session
        )
        let match = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "app://one")],
                authentication: authentication
            ),
            on: session
        )

        #expect(mismatch.status == 400)
        #expect(mismatch.json?["error"] as? String == "invalid_grant")
        #expect(match.status == 200)
    }

    @Test func anExpiredAuthorizationCodeIsRejected() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.authorizationCodeLifetime = 0
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let code = try await StubHarness.authorizationCode(stub, session: session)

        let exchange = try await StubHarness.exchange(stub, code: code, redirectURI: redirectURI, on: session)

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "invalid_grant")
        #expect(exchange.json?["error_description"] as? String == "Authorization code expired")
    }

    @Test func clientCredentialsInTheBodyAuthenticateTheClient() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let code = try await StubHarness.authorizationCode(stub, session: session)

        let exchange = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)],
                authentication: .body(id: "example-client", secret: "example-secret")
            ),
            on: session
        )

        #expect(exchange.status == 200)
    }

    // These go over raw sockets: on Linux, URLSession never completes a request whose 401 carries a
    // Basic challenge (see StubHarness.NoRedirects).
    @Test(arguments: [
        "Authorization: Basic \(Data("example-client:wrong-secret".utf8).base64EncodedString())",
        "Authorization: Basic \(Data("unknown-client:example-secret".utf8).base64EncodedString())",
        "Authorization: Basic %%%not-base64",
        "Authorization: Basic \(Data("no-colon".utf8).base64EncodedString())",
        "Authorization: Bearer some-access-token",
    ])
    func aFailedHeaderAuthenticationIs401WithABasicChallengeInTheRFCVariant(authorization: String) throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.invalidClientAnswer = .basicChallenge

        let response = try StubHarness.rawExchange(
            stub,
            StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=whatever", headers: [authorization])
        )

        #expect(response.status == 401)
        #expect(response.json?["error"] as? String == "invalid_client")
        #expect(response.headers["www-authenticate"] == "Basic realm=\"spotify\"")
        #expect(response.headers["cache-control"] == "no-store")
        #expect(stub.counters.tokenRequests == 1)
    }

    @Test func aFailedHeaderAuthenticationIs400InvalidClientAsSpotifyAnswersByDefault() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let wrong = "Authorization: Basic \(Data("example-client:wrong".utf8).base64EncodedString())"
        let response = try StubHarness.rawExchange(
            stub, StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=whatever", headers: [wrong]))
        #expect(response.status == 400)
        #expect(response.json?["error"] as? String == "invalid_client")
        #expect(response.headers["www-authenticate"] == nil)
    }

    @Test func urlSessionOnAFailedBasicAuthenticationFailsInsteadOfHanging() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.invalidClientAnswer = .basicChallenge
        let session = StubHarness.makeSession(timeout: 5)
        defer { session.invalidateAndCancel() }
        let request = StubHarness.tokenRequest(
            stub,
            [("grant_type", "refresh_token"), ("refresh_token", "whatever")],
            authentication: .basic(id: "example-client", secret: "wrong")
        )

        // Darwin delivers the 401; corelibs raises a challenge, which the harness cancels.
        do {
            let exchange = try await StubHarness.send(request, on: session)
            #expect(exchange.status == 401)
        } catch {
            #expect((error as? URLError)?.code == .cancelled)
        }
    }

    @Test func aFailedBodyAuthenticationIsInvalidClientWithoutAChallenge() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let wrongSecret = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "refresh_token"), ("refresh_token", "whatever")],
                authentication: .body(id: "example-client", secret: "wrong")
            ),
            on: session
        )
        let noCredentials = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "refresh_token"), ("refresh_token", "whatever")],
                authentication: .none
            ),
            on: session
        )

        for exchange in [wrongSecret, noCredentials] {
            #expect(exchange.status == 400)
            #expect(exchange.json?["error"] as? String == "invalid_client")
            #expect(exchange.header("WWW-Authenticate") == nil)
        }
    }

    /// RFC 6749 §2.3.1: the client form-encodes its id and secret before Basic encoding them, so a
    /// server decodes them again: `%2D` is the `-` of `example-secret`.
    @Test func basicCredentialsAreFormDecoded() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)

        let exchange = try await StubHarness.refresh(
            stub, refreshToken, session: session,
            authentication: .basic(id: "example%2Dclient", secret: "example%2dsecret"))

        #expect(exchange.status == 200, "\(exchange.text)")
    }

    /// A `code_verifier` for a code issued without `code_challenge` means the login URL lost its
    /// PKCE parameters on the way (a downgrade): refused, and the code still works without it.
    @Test func aCodeVerifierForACodeIssuedWithoutAChallengeIsInvalidGrant() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let code = try await StubHarness.authorizationCode(stub, session: session)
        let grant = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]

        let downgraded = try await StubHarness.send(
            StubHarness.tokenRequest(stub, grant + [("code_verifier", String(repeating: "v", count: 43))]),
            on: session)
        #expect(downgraded.status == 400)
        #expect(downgraded.json?["error"] as? String == "invalid_grant")

        let plain = try await StubHarness.send(StubHarness.tokenRequest(stub, grant), on: session)
        #expect(plain.status == 200)
    }

    @Test func usingBasicAndABodySecretTogetherIsInvalidRequest() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.send(
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "refresh_token"), ("refresh_token", "x"), ("client_secret", "example-secret")]
            ),
            on: session
        )

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "invalid_request")
    }

    @Test(arguments: ["password", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code"])
    func otherGrantTypesAreUnsupported(grantType: String) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.send(
            StubHarness.tokenRequest(stub, [("grant_type", grantType)]),
            on: session
        )

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "unsupported_grant_type")
        #expect(exchange.header("Cache-Control") == "no-store")
    }

    @Test func malformedTokenRequestsAreInvalidRequest() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        var jsonBody = StubHarness.tokenRequest(stub, [], contentType: "application/json")
        jsonBody.httpBody = Data(#"{"grant_type":"refresh_token","refresh_token":"x"}"#.utf8)
        var badEscape = StubHarness.tokenRequest(stub, [])
        badEscape.httpBody = Data("grant_type=refresh_token&refresh_token=%zz".utf8)
        let requests = [
            StubHarness.tokenRequest(stub, []),
            StubHarness.tokenRequest(stub, [("grant_type", "refresh_token")]),
            StubHarness.tokenRequest(stub, [("grant_type", "authorization_code"), ("code", "c")]),
            StubHarness.tokenRequest(stub, [("grant_type", "authorization_code"), ("redirect_uri", redirectURI)]),
            StubHarness.tokenRequest(
                stub,
                [("grant_type", "refresh_token"), ("refresh_token", "a"), ("refresh_token", "b")]
            ),
            jsonBody,
            badEscape,
        ]

        for request in requests {
            let exchange = try await StubHarness.send(request, on: session)
            #expect(exchange.status == 400)
            #expect(exchange.json?["error"] as? String == "invalid_request")
        }
        #expect(stub.counters.tokenRequests == requests.count)
    }

    @Test func unknownRefreshTokensAreInvalidGrant() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.refresh(stub, "AQ-never-issued", session: session)

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "invalid_grant")
        #expect(stub.counters.refreshTokenGrants == 0)
    }

    @Test func aRefreshTokenOnlyWorksForTheClientItWasIssuedTo() async throws {
        let other = SpotifyStub.Client(id: "other-client", secret: "other-secret", redirectURIs: ["app://other"])
        let stub = try StubHarness.startedStub(clients: [.example, other])
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)

        let exchange = try await StubHarness.refresh(
            stub, refreshToken, session: session, authentication: .basic(id: "other-client", secret: "other-secret"))

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "invalid_grant")
    }

    @Test func theTokenEndpointOnlyAcceptsPost() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get("/api/token", on: stub, session: session)

        #expect(exchange.status == 405)
        #expect(exchange.header("Allow") == "POST")
        #expect(stub.counters.tokenRequests == 0)
    }
}
