import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `authorizeRedirect`: the redirect within the origin is signed with the token held now, one to
/// another origin is followed bare, and one that cannot be signed is not followed at all.
@Suite("Redirect decisions", .timeLimit(.minutes(1)))
struct RedirectDecisionTests {
    private static let response = HTTPURLResponse(
        url: URL(string: "https://api.example.test/v1/me")!, statusCode: 302, httpVersion: nil,
        headerFields: ["Location": "/v1/next"])!

    private func decision(_ closure: Closure, for next: URLRequest) async -> URLRequest?? {
        let decision = Completions<URLRequest?>()
        closure.authorizeRedirect(next, answering: Self.response, originalRequest: nil, waitingAtMost: nil) {
            decision.record(0, $0)
        }
        await decision.wait(for: 1)
        return decision.results[0]
    }

    @Test(
        arguments: [
            (.succeed, "Bearer token-1"), (.fail(URLError(.notConnectedToInternet)), nil), (.fail(TestRefusal()), nil),
        ] as [(TokenService.Behavior, String?)])
    func aRedirectWithinTheOriginIsFollowedOnlyWithAFreshToken(behavior: TokenService.Behavior, header: String?)
        async throws
    {
        let service = TokenService(behavior: behavior)
        service.store(service.authentication("expired", stale: true))
        let next = makeRequest("/v1/next", headers: ["Authorization": "Bearer expired"])
        let decided = await decision(Closure.make(service), for: next)
        let followed = try #require(decided)
        if let header {
            #expect(followed?.value(forHTTPHeaderField: "Authorization") == header)
        } else {
            // No request that could be sent: the session does not follow the redirect.
            #expect(followed == nil)
        }
        #expect(service.refreshCount == 1)
    }

    @Test func aRedirectToAnotherOriginIsFollowedBareWithoutARefresh() async throws {
        let service = TokenService(behavior: .fail(TestRefusal()))
        service.store(service.authentication("expired", stale: true))
        var next = URLRequest(url: URL(string: "https://elsewhere.example.test/v1/next")!)
        next.setValue("Bearer expired", forHTTPHeaderField: "Authorization")
        let decided = await decision(Closure.make(service), for: next)
        let followed = try #require(decided.flatMap { $0 })
        #expect(followed.url == next.url)
        #expect(followed.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(service.refreshCount == 0)
    }
}

/// A refusal of the refresh that only a new login cures.
private struct TestRefusal: RefreshFailure {
    var requiresReauthentication: Bool { true }
}
