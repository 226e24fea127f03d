import Foundation
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub Web API", .timeLimit(.minutes(5)))
struct SpotifyStubWebAPITests {
    @Test(arguments: ["/v1/me", "/v1/me/player", "/v1/me/playlists"])
    func aValidAccessTokenOpensTheResources(path: String) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)

        let exchange = try await StubHarness.get(path, on: stub, session: session, bearer: tokens.accessToken)

        #expect(exchange.status == 200)
        #expect(exchange.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(exchange.json != nil)
    }

    @Test func meDescribesTheExampleUser() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)

        let me = try #require(
            try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken).json)

        #expect(me["id"] as? String == "example-user")
        #expect(me["display_name"] as? String == "Example User")
        #expect(me["country"] as? String == "SE")
    }

    @Test func aRequestWithoutATokenIs401NoTokenProvided() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get("/v1/me", on: stub, session: session)

        #expect(exchange.status == 401)
        #expect(exchange.header("WWW-Authenticate") == "Bearer realm=\"spotify\"")
        let error = try #require(exchange.json?["error"] as? [String: Any])
        #expect(error["status"] as? Int == 401)
        #expect(error["message"] as? String == "No token provided")
    }

    @Test(arguments: ["Bearer BQ-never-issued", "Basic Zm9vOmJhcg==", "Bearer"])
    func anUnknownOrMalformedTokenIs401InvalidAccessToken(authorization: String) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        request.setValue(authorization, forHTTPHeaderField: "Authorization")

        let exchange = try await StubHarness.send(request, on: session)

        #expect(exchange.status == 401)
        #expect(exchange.header("WWW-Authenticate") == "Bearer realm=\"spotify\", error=\"invalid_token\"")
        let error = try #require(exchange.json?["error"] as? [String: Any])
        #expect(error["message"] as? String == "Invalid access token")
    }

    @Test(.exclusive) func anAccessTokenExpiresAfterItsLifetime() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.accessTokenLifetime = 0.3
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let issuedBefore = Date()
        let tokens = try await StubHarness.login(stub, session: session)

        let fresh = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken)
        // Only assert "still valid" if the check certainly ran inside the lifetime.
        if Date().timeIntervalSince(issuedBefore) < 0.25 {
            #expect(fresh.status == 200)
        }
        var last = fresh
        // Counted from now, not from the login: on a loaded machine the login alone may take
        // seconds, and the token must still be seen to expire.
        let deadline = Date().addingTimeInterval(30)
        while last.status == 200 && Date() < deadline {
            try await Task.sleep(nanoseconds: 50_000_000)
            last = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken)
        }

        #expect(Date().timeIntervalSince(issuedBefore) >= 0.3)
        #expect(last.status == 401)
        #expect(last.header("WWW-Authenticate") == "Bearer realm=\"spotify\", error=\"invalid_token\"")
        let error = try #require(last.json?["error"] as? [String: Any])
        #expect(error["message"] as? String == "The access token expired")
    }

    @Test func expireAccessTokensExpiresEveryIssuedTokenButNotLaterOnes() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let first = try await StubHarness.login(stub, session: session)
        let second = try await StubHarness.login(stub, session: session)

        stub.expireAccessTokens()

        for token in [first.accessToken, second.accessToken] {
            let exchange = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: token)
            #expect(exchange.status == 401)
            #expect((exchange.json?["error"] as? [String: Any])?["message"] as? String == "The access token expired")
        }
        let refreshed = try StubHarness.tokens(
            from: try await StubHarness.refresh(stub, try #require(first.refreshToken), session: session)
        )
        let afterRefresh = try await StubHarness.get(
            "/v1/me", on: stub, session: session, bearer: refreshed.accessToken)
        #expect(afterRefresh.status == 200)
    }

    @Test func unknownPathsAre404AndOtherMethods405() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        var post = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        post.httpMethod = "POST"
        post.setValue("Bearer \(tokens.accessToken)", forHTTPHeaderField: "Authorization")
        post.httpBody = Data("{}".utf8)

        let unknown = try await StubHarness.get("/v1/albums", on: stub, session: session, bearer: tokens.accessToken)
        let elsewhere = try await StubHarness.get("/nowhere", on: stub, session: session)
        let wrongMethod = try await StubHarness.send(post, on: session)

        #expect(unknown.status == 404)
        #expect((unknown.json?["error"] as? [String: Any])?["status"] as? Int == 404)
        #expect(elsewhere.status == 404)
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET")
    }

    @Test func webAPIAnswersAreCountedByStatus() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)

        _ = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken)
        _ = try await StubHarness.get("/v1/me/player", on: stub, session: session, bearer: tokens.accessToken)
        _ = try await StubHarness.get("/v1/me", on: stub, session: session)
        _ = try await StubHarness.get("/v1/nope", on: stub, session: session)
        _ = try await StubHarness.get("/elsewhere", on: stub, session: session)

        #expect(stub.counters.apiRequestsByStatus == [200: 2, 401: 1, 404: 1])
        stub.resetCounters()
        #expect(stub.counters == Counters(liveConnections: stub.counters.liveConnections))
        #expect(stub.counters.liveConnections == 1)
    }
}
