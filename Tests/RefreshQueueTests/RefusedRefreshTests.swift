import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sentences of the README, each checked as a user of the library sees it: through its public
/// API only.
@Suite("A refused refresh: its event and its error", .timeLimit(.minutes(1)))
struct RefusedRefreshTests {
    /// An error of an app's own `refresh()` that quotes the refresh token it sent.
    struct RefreshRejected: Error {
        let refreshToken: String
    }

    /// An authentication whose refresh fails with an error that quotes its refresh token.
    struct QuotingAuthentication: RefreshableAuthentication {
        let accessToken: String
        let refreshToken: String
        var isRefreshNeeded: Bool { true }
        func refresh() -> Future<QuotingAuthentication> {
            Future(error: RefreshRejected(refreshToken: refreshToken))
        }
        static func find() -> QuotingAuthentication? { nil }
    }

    /// README, "What it never does": "never prints a token: its own errors and events, and what
    /// its types show in descriptions and `dump`, are free of them", and "Errors": a failed
    /// refresh fails the requests with the error `refresh()` failed with, unchanged.
    @Test func theEventOfAFailedRefreshShowsNoTokenAndTheRequestGetsTheRefreshsOwnError() async throws {
        let secret = "refresh-secret-4711"
        let events = Protected<[RefreshEvent]>([])
        let closure = RefreshingRequestClosure<QuotingAuthentication>(
            options: .init(onEvent: { event in events.withLock { $0.append(event) } }),
            find: { QuotingAuthentication(accessToken: "access-secret-0815", refreshToken: secret) })
        var thrown: (any Error)?
        do {
            _ = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.com/v1/me")!))
        } catch {
            thrown = error
        }
        let error = try #require(thrown as? RefreshRejected)
        #expect(error.refreshToken == secret)
        var printed: [String] = []
        for event in events.current {
            var dumpedEvent = ""
            dump(event, to: &dumpedEvent)
            printed += [String(describing: event), String(reflecting: event), dumpedEvent]
        }
        #expect(
            events.current.contains { event in
                guard case .refreshFailed(.refreshFailed(let carried as RefreshRejected), _) = event else {
                    return false
                }
                return carried.refreshToken == secret
            }, "expected an event that carries the refresh's error")
        for text in printed {
            #expect(!text.contains(secret), "a token in: \(text)")
            #expect(!text.contains("access-secret-0815"), "a token in: \(text)")
        }
    }
}

/// README, "OAuth 2.0 in five lines": on `invalid_grant` the stored token is removed and
/// `onReauthenticationRequired` is called once; after a refused refresh *ahead* (the first refresh
/// a token with an expiry meets), the access token still held signs requests until it needs a
/// refresh, and from then on requests fail with `notAuthenticated`, with no further refresh.
@Suite("A refresh ahead refused with invalid_grant", .timeLimit(.minutes(1)))
struct RefusedRefreshAheadTests {
    /// Whether the token has reached the end of its life, and how many refreshes were asked for.
    struct Clock {
        var expired = false
        var refreshes = 0
    }

    /// The refresh token was revoked: only a new login helps.
    struct InvalidGrant: RefreshFailure {
        var requiresReauthentication: Bool { true }
    }

    struct Ageing: RefreshableAuthentication {
        let accessToken: String
        let clock: Protected<Clock>
        var isRefreshNeeded: Bool { clock.current.expired }
        var isRefreshRecommended: Bool { true }
        func refresh() -> Future<Ageing> {
            clock.withLock { $0.refreshes += 1 }
            return Future(error: InvalidGrant())
        }
        static func find() -> Ageing? { nil }
    }

    @Test func theStoreIsClearedAndTheHandlerCalledOnceAndTheHeldTokenSignsUntilItExpires() async throws {
        let clock = Protected(Clock())
        let store = InMemoryAuthenticationStore(Ageing(accessToken: "ageing", clock: clock))
        let calls = Protected(0)
        let closure = RefreshingRequestClosure(
            store: store, onReauthenticationRequired: { _ in calls.withLock { $0 += 1 } })
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
        // The refresh ahead this starts is refused; refreshIfNeeded waits for it.
        await #expect(throws: (any Error).self) { try await closure.refreshIfNeeded() }
        #expect(calls.current == 1)
        #expect(store.load() == nil)
        // The closure still holds the access token, which still works: requests are signed.
        let signed = try await closure.authorize(request)
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer ageing")
        // Once it needs a refresh, requests fail with notAuthenticated, and no refresh is sent.
        clock.withLock { $0.expired = true }
        for _ in 0..<3 {
            await #expect(throws: RefreshQueueError.notAuthenticated) { try await closure.authorize(request) }
        }
        #expect(clock.current.refreshes == 1)
        #expect(calls.current == 1)
    }
}
