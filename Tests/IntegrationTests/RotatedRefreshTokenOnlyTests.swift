import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server that rotates the refresh token but hands back the same access token (some gateways
/// do while the access token is still valid), with two closures on one store, as two processes
/// share a token file.
@Suite("A server that rotates only the refresh token", .timeLimit(.minutes(2)))
struct RotatedRefreshTokenOnlyTests {
    @Test func aClosureRefreshesFromTheRefreshTokenAnotherRotatedNotFromItsSpentOne() async throws {
        // Accepts only the newest refresh token, and revokes the session on a replay (RFC 9700).
        let newest = Protected(0)
        let server = try LoopbackServer { request in
            let form = String(decoding: request.body, as: UTF8.self).split(separator: "&")
            let (status, body): (Int, String) = newest.withLock { newest in
                guard newest >= 0, form.contains("refresh_token=rt-\(newest)") else {
                    newest = -1
                    return (400, #"{"error":"invalid_grant","error_description":"reused"}"#)
                }
                newest += 1
                return (
                    200,
                    #"{"access_token":"same-access","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-\#(newest)"}"#
                )
            }
            return .answer(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123")
        let store = InMemoryAuthenticationStore(
            OAuth2Token(accessToken: "same-access", refreshToken: "rt-0", expiresIn: 3600))
        let ended = Protected(0)
        let first = RefreshingRequestClosure(
            client: client, store: store, onReauthenticationRequired: { _ in ended.withLock { $0 += 1 } })
        let second = RefreshingRequestClosure(client: client, store: store)
        let url = try #require(URL(string: "https://api.example.test/v1/me"))
        let request = URLRequest(url: url)
        let unauthorized = try #require(
            HTTPURLResponse(url: url, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: [:]))
        let rejectedBy = { (closure: RefreshingRequestClosure<OAuth2Authentication>) async throws in
            _ = try await closure.reauthorize(try await closure.authorize(request), response: unauthorized)
        }

        try await rejectedBy(first)  // rt-0 → rt-1
        #expect(store.load()?.refreshToken == "rt-1")
        try await rejectedBy(second)  // rt-1 → rt-2, which the first closure has not seen
        #expect(store.load()?.refreshToken == "rt-2")
        // The first closure holds rt-1, spent: it takes rt-2 from the store (the same access
        // token), and its next refresh sends rt-2.
        try await rejectedBy(first)
        try await rejectedBy(first)  // rt-2 → rt-3

        let sent = server.requests.map { request in
            String(decoding: request.body, as: UTF8.self).split(separator: "&").first { $0.hasPrefix("refresh_token=") }
                .map(String.init) ?? ""
        }
        #expect(sent == ["refresh_token=rt-0", "refresh_token=rt-1", "refresh_token=rt-2"])
        #expect(store.load()?.refreshToken == "rt-3")
        #expect(ended.current == 0)
    }
}
