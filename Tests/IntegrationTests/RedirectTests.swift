import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A token that never needs a refresh, counting the refreshes asked of it anyway.
struct CountedAuthentication: RefreshableAuthentication {
    static let refreshes = Protected(0)

    let accessToken: String
    var isRefreshNeeded: Bool { false }

    func refresh() -> Future<CountedAuthentication> {
        Self.refreshes.withLock { $0 += 1 }
        return Future(value: CountedAuthentication(accessToken: accessToken + "-refreshed"))
    }

    static func find() -> CountedAuthentication? { nil }
}

/// A token that never needs a refresh, counting the refreshes asked of it in a counter of its own,
/// which tests running beside it do not touch.
private struct OwnCountAuthentication: RefreshableAuthentication {
    let accessToken: String
    let refreshes: Protected<Int>
    var isRefreshNeeded: Bool { false }

    func refresh() -> Future<OwnCountAuthentication> {
        refreshes.withLock { $0 += 1 }
        return Future(value: self)
    }

    static func find() -> OwnCountAuthentication? { nil }
}

/// The token crosses a redirect only within its origin: `data(for:using:)` follows redirects
/// itself, and `RedirectSigningDelegate` does the same for an app's own session.
@Suite("Redirects and the token", .timeLimit(.minutes(2)))
struct RedirectTests {
    static let token = "redirect-test-token"

    private func closure() -> RefreshingRequestClosure<CountedAuthentication> {
        RefreshingRequestClosure(find: { CountedAuthentication(accessToken: Self.token) })
    }

    /// A server answering `/start` with a redirect to `location`, and anything else with 200.
    private func redirecting(status: Int, to location: @escaping @Sendable () -> String) throws -> LoopbackServer {
        try LoopbackServer { request in
            guard request.path.hasPrefix("/start") else {
                return .answer(status: 200, headers: [:], body: Data("landed".utf8))
            }
            return .answer(status: status, headers: ["Location": location()], body: Data())
        }
    }

    private func carriesToken(_ request: LoopbackServer.Request) -> Bool {
        request.headers.contains { $0.key == "authorization" } || request.everything.contains(Self.token)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectToAnotherOriginCarriesNoToken(status: Int) async throws {
        let other = try LoopbackServer { _ in .answer(status: 200, headers: [:], body: Data("elsewhere".utf8)) }
        defer { other.stop() }
        let server = try redirecting(status: status) { "http://localhost:\(other.port)/landing" }
        defer { server.stop() }
        for session in [URLSession.shared, URLSession(configuration: .ephemeral)] {
            var request = URLRequest(url: server.baseURL.appendingPathComponent("start"))
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let (data, response) = try await closure().data(for: request, using: session)
            #expect(String(decoding: data, as: UTF8.self) == "elsewhere")
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
        #expect(server.requests.allSatisfy(carriesToken))
        #expect(other.requests.count == 2)
        #expect(!other.requests.contains(where: carriesToken))
        #expect(other.requests.allSatisfy { $0.headers["accept"] == "application/json" })
    }

    @Test func aRedirectWithinTheOriginIsSignedAgainWithoutARefresh() async throws {
        let server = try redirecting(status: 302) { "/landing?after=redirect" }
        defer { server.stop() }
        let before = CountedAuthentication.refreshes.current
        let (data, _) = try await closure().data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("start")), using: .shared)
        #expect(String(decoding: data, as: UTF8.self) == "landed")
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.headers["authorization"] == "Bearer \(Self.token)" })
        #expect(server.requests.last?.path == "/landing?after=redirect")
        #expect(CountedAuthentication.refreshes.current == before)
    }

    /// RFC 9110 §15.4: a 301 or 302 turns only a POST into a GET, a 303 turns anything but a HEAD
    /// into a GET, and a 307 or 308 keeps the method and the body.
    @Test(
        arguments: [
            (301, "POST", "GET", ""), (302, "POST", "GET", ""), (301, "PUT", "PUT", "payload"),
            (302, "PUT", "PUT", "payload"), (303, "POST", "GET", ""), (303, "PUT", "GET", ""),
            (303, "HEAD", "HEAD", ""), (307, "POST", "POST", "payload"), (308, "POST", "POST", "payload"),
        ])
    func aRedirectChangesTheMethodAsHTTPSays(status: Int, sent: String, landed: String, landedBody: String)
        async throws
    {
        let server = try redirecting(status: status) { "/landing" }
        defer { server.stop() }
        var request = URLRequest(url: server.baseURL.appendingPathComponent("start"))
        request.httpMethod = sent
        if sent != "HEAD" {
            request.httpBody = Data("payload".utf8)
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        }
        _ = try await closure().data(for: request, using: .shared)
        #expect(server.requests.count == 2)
        let arrived = try #require(server.requests.last)
        #expect(arrived.path == "/landing")
        #expect(arrived.method == landed)
        #expect(String(decoding: arrived.body, as: UTF8.self) == landedBody)
        #expect((arrived.headers["content-type"] != nil) == !landedBody.isEmpty)
        #expect(arrived.headers["authorization"] == "Bearer \(Self.token)")
    }

    /// A body read from a stream cannot be sent twice: a 307 keeping it is answered with the 307
    /// itself; a 303, which drops the body, is followed.
    @Test(arguments: [(307, 1), (303, 2)])
    func aStreamedBodyIsNotSentTwice(status: Int, requests: Int) async throws {
        let server = try redirecting(status: status) { "/landing" }
        defer { server.stop() }
        var request = URLRequest(url: server.baseURL.appendingPathComponent("start"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("payload".utf8))
        let (_, response) = try await closure().data(for: request, using: .shared)
        #expect((response as? HTTPURLResponse)?.statusCode == (requests == 1 ? status : 200))
        #expect(server.requests.count == requests)
    }

    /// A 401 from the other origin a redirect led to came for a request without the token: it is
    /// no reason to refresh, and the answer is the 401.
    @Test func a401FromAnotherOriginAfterARedirectIsAnsweredWithoutARefresh() async throws {
        let other = try LoopbackServer { _ in .answer(status: 401, headers: [:], body: Data()) }
        defer { other.stop() }
        let server = try redirecting(status: 302) { "http://localhost:\(other.port)/landing" }
        defer { server.stop() }
        let before = CountedAuthentication.refreshes.current
        let (_, response) = try await closure().data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("start")), using: .shared)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(other.requests.count == 1)
        #expect(server.requests.count == 1)
        #expect(CountedAuthentication.refreshes.current == before)
    }

    /// A request sent without the token (`requiresAuthentication` exempts it) is not retried
    /// after a 401, and no refresh is started for it; a signed one beside it is.
    @Test(arguments: [false, true])
    func a401IsRetriedOnlyForARequestThatCarriedTheToken(signed: Bool) async throws {
        let server = try LoopbackServer { _ in .answer(status: 401, headers: [:], body: Data()) }
        defer { server.stop() }
        let refreshes = Protected(0)
        let closure = RefreshingRequestClosure<OwnCountAuthentication>(
            options: .init(requiresAuthentication: { _ in signed }),
            find: { OwnCountAuthentication(accessToken: Self.token, refreshes: refreshes) })
        let (_, response) = try await closure.data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("me")), using: .shared)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(server.requests.count == (signed ? 2 : 1))
        #expect(server.requests.allSatisfy { ($0.headers["authorization"] != nil) == signed })
        #expect(refreshes.current == (signed ? 1 : 0))
    }

    @Test func aRedirectLoopEndsWithTooManyRedirects() async throws {
        let server = try redirecting(status: 302) { "/start" }
        defer { server.stop() }
        await #expect {
            _ = try await closure().data(
                for: URLRequest(url: server.baseURL.appendingPathComponent("start")), using: .shared)
        } throws: { error in
            (error as? URLError)?.code == .httpTooManyRedirects
        }
        #expect(server.requests.count == 11)
    }

    @Test(arguments: [302, 307])
    func anAppsOwnSessionWithTheRedirectDelegateKeepsTheTokenInItsOrigin(status: Int) async throws {
        let other = try LoopbackServer { _ in .answer(status: 200, headers: [:], body: Data()) }
        defer { other.stop() }
        let crossing = try redirecting(status: status) { "http://localhost:\(other.port)/landing" }
        defer { crossing.stop() }
        let staying = try redirecting(status: status) { "/landing" }
        defer { staying.stop() }
        let authentication = closure()
        let session = URLSession(
            configuration: .ephemeral, delegate: RedirectSigningDelegate(authentication), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        for server in [crossing, staying] {
            let signed = try await authentication.authorize(
                URLRequest(url: server.baseURL.appendingPathComponent("start")))
            _ = try await session.data(for: signed)
        }
        #expect(!other.requests.contains(where: carriesToken))
        #expect(staying.requests.count == 2 && staying.requests.allSatisfy(carriesToken))
    }

    /// A → B → B: the hop within B follows one that left the token's origin; neither carries the
    /// token, with `data(for:using:)` and with the redirect delegate on an app's own session.
    @Test func aHopWithinAnotherOriginAfterLeavingTheTokensOriginCarriesNoToken() async throws {
        let other = try redirecting(status: 302) { "/landing" }
        defer { other.stop() }
        let api = try redirecting(status: 302) { "http://localhost:\(other.port)/start" }
        defer { api.stop() }
        let authentication = closure()
        let start = URLRequest(url: api.baseURL.appendingPathComponent("start"))
        let (data, _) = try await authentication.data(for: start, using: .shared)
        #expect(String(decoding: data, as: UTF8.self) == "landed")
        let session = URLSession(
            configuration: .ephemeral, delegate: RedirectSigningDelegate(authentication), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        _ = try await session.data(for: try await authentication.authorize(start))
        #expect(other.requests.map(\.path) == ["/start", "/landing", "/start", "/landing"])
        #expect(!other.requests.contains(where: carriesToken))
        #expect(api.requests.count == 2 && api.requests.allSatisfy(carriesToken))
    }

    /// A → B → A → A: the other origin sends the chain back to a URL of its choosing on the
    /// token's origin. Neither the hop back nor the one after it carries the token: the second
    /// was signed, with `data(for:using:)` and with the redirect delegate, as if the chain had
    /// never left.
    @Test func aChainThatLeavesTheTokensOriginAndComesBackCarriesNoTokenOnItsReturn() async throws {
        let api = try LoopbackServer { request in
            switch request.path {
            case "/start":
                .answer(
                    status: 302, headers: ["Location": "http://localhost:\(Self.otherPort.current)/x"], body: Data())
            case "/back": .answer(status: 302, headers: ["Location": "/delete-account?confirm=1"], body: Data())
            default: .answer(status: 200, headers: [:], body: Data("landed".utf8))
            }
        }
        defer { api.stop() }
        let other = try LoopbackServer { _ in
            .answer(status: 302, headers: ["Location": "\(api.baseURL.absoluteString)/back"], body: Data())
        }
        defer { other.stop() }
        Self.otherPort.withLock { $0 = other.port }
        let authentication = closure()
        let start = URLRequest(url: api.baseURL.appendingPathComponent("start"))
        let (data, _) = try await authentication.data(for: start, using: .shared)
        #expect(String(decoding: data, as: UTF8.self) == "landed")
        let delegated = URLSession(
            configuration: .ephemeral, delegate: RedirectSigningDelegate(authentication), delegateQueue: nil)
        defer { delegated.finishTasksAndInvalidate() }
        _ = try await delegated.data(for: try await authentication.authorize(start))
        let own = URLSession(
            configuration: .ephemeral, delegate: OwnRedirectDelegate(authentication), delegateQueue: nil)
        defer { own.finishTasksAndInvalidate() }
        _ = try await own.data(for: try await authentication.authorize(start))
        #expect(
            api.requests.map(\.path)
                == Array(repeating: ["/start", "/back", "/delete-account?confirm=1"], count: 3).flatMap { $0 })
        #expect(api.requests.map(carriesToken) == Array(repeating: [true, false, false], count: 3).flatMap { $0 })
        #expect(!other.requests.contains(where: carriesToken))
    }

    /// The port of the other origin, for a server made before it.
    private static let otherPort = Protected<UInt16>(0)

    @Test func onlyTheAllowedOriginGetsTheTokenAndPlainHTTPElsewhereIsRefusedBeforeSending() async throws {
        let api = try LoopbackServer { _ in .answer(status: 200, headers: [:], body: Data()) }
        defer { api.stop() }
        let foreign = try LoopbackServer { _ in .answer(status: 200, headers: [:], body: Data()) }
        defer { foreign.stop() }
        let authentication = RefreshingRequestClosure<CountedAuthentication>(
            options: .init(
                origins: .only(api.baseURL)
            ),
            find: { CountedAuthentication(accessToken: Self.token) }
        )
        _ = try await authentication.data(
            for: URLRequest(url: api.baseURL.appendingPathComponent("v1/me")), using: .shared)
        _ = try await authentication.data(
            for: URLRequest(url: foreign.baseURL.appendingPathComponent("v1/me")), using: .shared)
        #expect(api.requests.count == 1 && api.requests.allSatisfy(carriesToken))
        #expect(foreign.requests.count == 1 && !foreign.requests.contains(where: carriesToken))

        let everywhere = closure()
        await #expect {
            _ = try await everywhere.data(
                for: URLRequest(url: URL(string: "http://api.example.test/v1/me")!), using: .shared)
        } throws: { error in
            guard case RefreshQueueError.insecureRequest("api.example.test") = error else { return false }
            return true
        }
    }

    @Test func authorizeRedirectTakesTheTokenOffWhenTheSchemeChanges() async throws {
        let authentication = closure()
        let signed = try await authentication.authorize(URLRequest(url: URL(string: "https://api.example.test/a")!))
        var next = signed
        next.url = URL(string: "http://api.example.test/b")
        next.setValue("Bearer \(Self.token)", forHTTPHeaderField: "AUTHORIZATION")
        let response = HTTPURLResponse(url: signed.url!, statusCode: 302, httpVersion: nil, headerFields: nil)!
        let decided = Completions<URLRequest?>()
        // A task that is never resumed: its original and current request are the signed one.
        let task = URLSession.shared.dataTask(with: signed)
        authentication.authorizeRedirect(next, answering: response, task: task) { decided.record(0, $0) }
        await decided.wait(for: 1)
        let forwarded = try #require(decided.results[0] ?? nil)
        #expect(forwarded.url == next.url)
        #expect(!(forwarded.allHTTPHeaderFields ?? [:]).keys.contains { $0.lowercased() == "authorization" })
    }
}

/// An app's own session delegate that asks the closure about each redirect, with the task.
private final class OwnRedirectDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let authentication: RefreshingRequestClosure<CountedAuthentication>

    init(_ authentication: RefreshingRequestClosure<CountedAuthentication>) {
        self.authentication = authentication
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        authentication.authorizeRedirect(request, answering: response, task: task, completion: completionHandler)
    }
}
