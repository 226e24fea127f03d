import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// iOS 14, macOS 11 and older have no task delegates: the session follows redirects itself, and
/// Apple's URLSession drops `Authorization` on the way, even within the origin. Played here by a
/// session whose delegate drops it as Apple's does.
@Suite("Redirects the session followed and a 401 where they landed", .timeLimit(.minutes(1)))
struct FollowedRedirectTests {
    static let token = "followed-redirect-token"

    /// `/me` redirects (301) to `/v1/me` (Linux's URLSession drops a trailing slash from a
    /// `Location`), which wants the token; `/away` redirects (302) to `elsewhere`.
    private static func server(elsewhere: URL? = nil) throws -> LoopbackServer {
        try LoopbackServer { request in
            switch request.path {
            case "/me":
                return .answer(status: 301, headers: ["Location": "/v1/me"], body: Data())
            case "/away":
                return .answer(status: 302, headers: ["Location": elsewhere?.absoluteString ?? "/"], body: Data())
            default:
                let signed = request.headers["authorization"] == "Bearer \(Self.token)"
                return .answer(status: signed ? 200 : 401, headers: [:], body: signed ? Data("me".utf8) : Data())
            }
        }
    }

    private static func closure(_ service: TokenService) -> RefreshingRequestClosure<FakeAuthentication> {
        RefreshingRequestClosure(find: { service.authentication(Self.token) })
    }

    private static let appleLikeSession = URLSession(
        configuration: .ephemeral, delegate: DropsAuthorizationOnRedirect(), delegateQueue: nil)

    @Test func aGetThatLandedWithinTheOriginIsSignedThereWithoutARefresh() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let service = TokenService()
        let (data, response) = try await Self.closure(service).data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("me")), using: Self.appleLikeSession,
            sessionFollowsRedirects: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "me")
        #expect(service.refreshCount == 0)
        // /me signed, /v1/me without the token (dropped), /v1/me signed again.
        #expect(server.requests.map(\.path) == ["/me", "/v1/me", "/v1/me"])
        #expect(server.requests.map { $0.headers["authorization"] != nil } == [true, false, true])
    }

    /// Without the landing rule the 401 for the dropped header was blamed on the token: a
    /// refresh for every request.
    @Test func whereTheSessionFollowsNoRedirectsAFirst401StillRefreshes() async throws {
        let server = try LoopbackServer { request in
            let fresh = request.headers["authorization"] == "Bearer token-1"
            return .answer(status: fresh ? 200 : 401, headers: [:], body: Data())
        }
        defer { server.stop() }
        let service = TokenService()
        let (_, response) = try await Self.closure(service).data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("me")), using: Self.appleLikeSession,
            sessionFollowsRedirects: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(service.refreshCount == 1)
        #expect(server.requests.count == 2)
    }

    /// A POST the session redirected (a 303 may have made it a GET) is not sent again, and its
    /// 401, for a request that had lost the token on the way, starts no refresh.
    @Test func aPostThatLandedElsewhereIsNotSentThereAgainNorRefreshes() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let service = TokenService()
        var request = URLRequest(url: server.baseURL.appendingPathComponent("me"))
        request.httpMethod = "POST"
        request.httpBody = Data("body".utf8)
        let (_, response) = try await Self.closure(service).data(
            for: request, using: Self.appleLikeSession, sessionFollowsRedirects: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(!server.requests.dropFirst().contains { $0.path == "/v1/me" && $0.headers["authorization"] != nil })
        #expect(service.refreshCount == 0)
    }

    @Test func aGetThatLandedOnAnotherOriginGetsNoToken() async throws {
        let other = try LoopbackServer { _ in .answer(status: 401, headers: [:], body: Data()) }
        defer { other.stop() }
        let server = try Self.server(elsewhere: other.baseURL.appendingPathComponent("landing"))
        defer { server.stop() }
        let service = TokenService()
        let (_, response) = try await Self.closure(service).data(
            for: URLRequest(url: server.baseURL.appendingPathComponent("away")), using: Self.appleLikeSession,
            sessionFollowsRedirects: true)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(!other.requests.isEmpty)
        #expect(!other.requests.contains { $0.headers["authorization"] != nil || $0.everything.contains(Self.token) })
        #expect(service.refreshCount == 0)
    }

    @Test func aLandingThatKeepsRedirectingEndsWithTooManyRedirects() async throws {
        // Every signed request lands, through a redirect, on a new path that answers 401.
        let server = try LoopbackServer { request in
            if request.headers["authorization"] != nil {
                return .answer(status: 302, headers: ["Location": request.path + "x"], body: Data())
            }
            return .answer(status: 401, headers: [:], body: Data())
        }
        defer { server.stop() }
        await #expect(throws: URLError.self) {
            _ = try await Self.closure(TokenService()).data(
                for: URLRequest(url: server.baseURL.appendingPathComponent("me")), using: Self.appleLikeSession,
                sessionFollowsRedirects: true)
        }
        #expect(server.requests.count <= 2 * (RefreshingRequestClosure<FakeAuthentication>.maximumRedirects + 2))
    }

    private final class DropsAuthorizationOnRedirect: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            var dropped = request
            dropped.setValue(nil, forHTTPHeaderField: "Authorization")
            completionHandler(dropped)
        }
    }
}
