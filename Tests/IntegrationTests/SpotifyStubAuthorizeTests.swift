import Foundation
import SpotifyStub
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub /authorize", .timeLimit(.minutes(2)))
struct SpotifyStubAuthorizeTests {
    @Test func authorizeRedirectsBackWithACodeAndTheState() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(
            StubHarness.authorizePath(state: "a b&c=d/é"),
            on: stub,
            session: session
        )

        #expect(exchange.status == 302)
        let location = try #require(exchange.header("Location"))
        #expect(location.hasPrefix("refreshqueue-example://callback?code="))
        let items = try StubHarness.queryItems(of: location)
        #expect(items["state"] == "a b&c=d/é")
        #expect(items["code"]?.isEmpty == false)
        #expect(!location.contains(" "))
    }

    @Test func authorizeOmitsTheStateWhenNoneWasSent() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(StubHarness.authorizePath(state: nil), on: stub, session: session)

        #expect(exchange.status == 302)
        let items = try StubHarness.queryItems(of: try #require(exchange.header("Location")))
        #expect(items["code"] != nil)
        #expect(items["state"] == nil)
    }

    @Test func authorizeRejectsAnUnknownClientWithoutRedirecting() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(
            StubHarness.authorizePath(clientID: "someone-else"),
            on: stub,
            session: session
        )

        #expect(exchange.status == 400)
        #expect(exchange.header("Location") == nil)
        #expect(exchange.text.contains("INVALID_CLIENT: Invalid client"))
    }

    @Test func authorizeRejectsAnUnregisteredRedirectURIWithoutRedirecting() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(
            StubHarness.authorizePath(redirectURI: "https://evil.example/callback"),
            on: stub,
            session: session
        )

        #expect(exchange.status == 400)
        #expect(exchange.header("Location") == nil)
        #expect(exchange.text.contains("Invalid redirect URI"))
    }

    @Test(arguments: [String?.none, "token", "CODE"])
    func authorizeReportsAnUnsupportedResponseTypeByRedirect(responseType: String?) async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(
            StubHarness.authorizePath(responseType: responseType, state: "s1"),
            on: stub,
            session: session
        )

        #expect(exchange.status == 302)
        let items = try StubHarness.queryItems(of: try #require(exchange.header("Location")))
        #expect(items["error"] == "unsupported_response_type")
        #expect(items["state"] == "s1")
        #expect(items["code"] == nil)
    }

    @Test func authorizeAcceptsAnyRegisteredRedirectURIOfAClient() async throws {
        let client = SpotifyStub.Client(
            id: "multi",
            secret: "multi-secret",
            redirectURIs: ["http://127.0.0.1/one", "http://127.0.0.1/two?keep=1"]
        )
        let stub = try StubHarness.startedStub(clients: [client])
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }

        let exchange = try await StubHarness.get(
            StubHarness.authorizePath(clientID: "multi", redirectURI: "http://127.0.0.1/two?keep=1"),
            on: stub,
            session: session
        )

        #expect(exchange.status == 302)
        let location = try #require(exchange.header("Location"))
        #expect(location.hasPrefix("http://127.0.0.1/two?keep=1&code="))
    }

    @Test func authorizeOnlyAllowsGet() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        var request = URLRequest(
            url: try #require(URL(string: stub.baseURL.absoluteString + StubHarness.authorizePath())))
        request.httpMethod = "DELETE"

        let exchange = try await StubHarness.send(request, on: session)

        #expect(exchange.status == 405)
        #expect(exchange.header("Allow") == "GET")
    }

    /// Spotify's rule for command-line tools: a loopback URI registered without a port takes any
    /// port; only the IP literals are loopback, never `localhost`.
    @Test(arguments: [
        ("http://127.0.0.1:49152/callback", true), ("http://127.0.0.1:1/callback", true),
        ("http://[::1]:8080/callback", true), ("http://127.0.0.1/callback", true),
        ("http://127.0.0.1:8080/other", false), ("http://127.0.0.1:8080/callback/x", false),
        ("http://localhost:8080/callback", false), ("http://localhost/callback", false),
        ("http://127.0.0.2:8080/callback", false), ("https://127.0.0.1:8080/callback", false),
        ("http://user@127.0.0.1:8080/callback", false), ("http://127.0.0.1:99999/callback", false),
        ("http://127.0.0.1:8080/callback?x=1", false), ("http://[::1]:8080/other", false),
    ])
    func aLoopbackRedirectURIRegisteredWithoutAPortTakesAnyPort(uri: String, accepted: Bool) {
        #expect(SpotifyStub.Client.example.accepts(redirectURI: uri) == accepted)
    }

    @Test func aRegisteredLoopbackURIWithAPortTakesOnlyThatPortAndLocalhostNever() {
        let client = SpotifyStub.Client(
            id: "fixed", secret: "s", redirectURIs: ["http://127.0.0.1:5000/cb", "http://localhost:5000/cb"])
        #expect(client.accepts(redirectURI: "http://127.0.0.1:5000/cb"))
        #expect(!client.accepts(redirectURI: "http://127.0.0.1:5001/cb"))
        #expect(!client.accepts(redirectURI: "http://localhost:5000/cb"))
    }

    @Test func authorizeSendsTheUserBackToALoopbackListenerOnThePortItAsked() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let accepted = try await StubHarness.get(
            StubHarness.authorizePath(redirectURI: "http://127.0.0.1:43210/callback"), on: stub, session: session)
        #expect(accepted.status == 302)
        #expect(accepted.header("Location")?.hasPrefix("http://127.0.0.1:43210/callback?code=") == true)
        let refused = try await StubHarness.get(
            StubHarness.authorizePath(redirectURI: "http://localhost:43210/callback"), on: stub, session: session)
        #expect(refused.status == 400)
    }
}
