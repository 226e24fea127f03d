import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's promises and defaults, each pinned, so that changing one is a deliberate act.
@Suite("Defaults, the fast path, Retry-After and invalid_grant", .timeLimit(.minutes(2)))
struct DefaultsAndFastPathTests {
    @Test func theDefaultsAreThirtySecondsFourTimesThatFiveRefreshesInThirtySecondsAndBearer() {
        let closure = RefreshingRequestClosure<FakeAuthentication>()
        #expect(closure.options.refreshTimeout == 30)
        #expect(closure.options.abandonAfter == 120)
        #expect(closure.options.refreshWindow == RefreshWindow(maximumRefreshes: 5, interval: 30))
        #expect(RefreshWindow.default == RefreshWindow(maximumRefreshes: 5, interval: 30))
        #expect(closure.scheme == .bearer)
        #expect(closure.origins == .all)
        #expect(
            RefreshingRequestClosure<FakeAuthentication>(options: .init(refreshTimeout: 2)).options.abandonAfter == 120)
        #expect(
            RefreshingRequestClosure<FakeAuthentication>(options: .init(refreshTimeout: 60)).options.abandonAfter == 240
        )
        let client = TokenEndpointClient(tokenURL: URL(string: "https://a.test/token")!, clientID: "c")
        #expect(client.requestTimeout == 30)
        #expect(client.acceptedTokenTypes == ["Bearer"])
        #expect(TokenEndpointClient.maximumRetryAfter == 86_400)
    }

    /// A loop (every refresh brings a token that already needs one) is stopped after five
    /// refreshes in thirty seconds: the sixth is refused until the first leaves the window.
    @Test func withTheDefaultWindowASixthLoopingRefreshWithinThirtySecondsIsRefused() async throws {
        let service = TokenService(behavior: .stale)
        let clock = ManualClock()
        let closure = Closure(options: .init(clock: clock.now), find: service.find)
        service.store(service.authentication("expired", stale: true))
        for _ in 1...6 {
            await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        }
        #expect(service.refreshCount == 5)
        service.setBehavior(.succeed)
        clock.advance(by: 29)
        await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        #expect(service.refreshCount == 5)
        clock.advance(by: 1)
        #expect(
            try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer token-6")
    }

    @Test func aFastPathCompletionIsCalledExactlyOnceBeforeAuthorizeReturns() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        let calls = Protected([Int](repeating: 0, count: 1_000))
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            closure.authorize(makeRequest()) { _ in calls.withLock { $0[index] += 1 } }
            #expect(calls.withLock { $0[index] } == 1)
        }
        #expect(calls.current.allSatisfy { $0 == 1 })
    }

    /// The first request waits for `find()`; the one sent as soon as it has completed finds a
    /// valid token held and nothing waiting, so it is signed before `authorize` returns, also when
    /// the token recommends a refresh (which then starts in the background, held open here).
    @Test(arguments: [false, true])
    func theRequestAfterTheFirstIsSignedBeforeAuthorizeReturns(recommended: Bool) async throws {
        var late = 0
        for round in 0..<200 {
            let service = TokenService(behavior: .hold)
            service.store(service.authentication("valid-\(round)", recommended: recommended))
            let closure = Closure.make(service)
            _ = try await closure.authorize(makeRequest())
            if !closure.signsAtOnce(with: "Bearer valid-\(round)") { late += 1 }
            service.completePending()
        }
        #expect(late == 0, "\(late) of 200 requests waited although a valid token was held and nothing waited")
    }

    /// The completion of the last request that waited sends the next one (the next step of a
    /// chain of calls): nothing else waits, so it is signed before `authorize` returns, inside
    /// that completion.
    @Test func aRequestSentFromTheLastWaitingRequestsCompletionIsSignedAtOnce() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let inner = Completions<Bool>()
        for index in 0..<3 {
            closure.authorize(makeRequest()) { _ in
                guard index == 2 else { return }
                inner.record(0, closure.signsAtOnce(with: "Bearer token-1"))
            }
        }
        await service.started.wait(for: 1)
        service.completePending()
        await inner.wait(for: 1)
        #expect(inner.results[0] == true)
    }

    @Test(arguments: [7_200.0, 864_000.0])
    func aRetryAfterIsHonouredUpToADay(retryAfter: TimeInterval) async throws {
        let service = TokenService(behavior: .fail(TokenEndpointRetryAfter(seconds: retryAfter)))
        service.store(service.authentication("expired", stale: true))
        let clock = ManualClock()
        let closure = Closure.make(service, refreshWindow: .unlimited, clock: clock)
        await #expect(throws: TokenEndpointRetryAfter.self) { try await closure.authorize(makeRequest()) }
        // Until the server's time (a day at most), no refresh: the same error at once.
        clock.advance(by: min(retryAfter, 86_400) - 1)
        await #expect(throws: TokenEndpointRetryAfter.self) { try await closure.authorize(makeRequest()) }
        #expect(service.refreshCount == 1)
        clock.advance(by: 2)
        service.setBehavior(.succeed)
        _ = try await closure.authorize(makeRequest())
        #expect(service.refreshCount == 2)
    }

    @Test func anOAuth2ErrorTellsTheClosureItsRetryAfterAndThatItIsATransportFailure() async throws {
        let throttled = TokenService(behavior: .fail(OAuth2Error.server(status: 503, retryAfter: 60)))
        throttled.store(throttled.authentication("expired", stale: true))
        let clock = ManualClock()
        let closure = Closure.make(throttled, refreshWindow: .unlimited, clock: clock)
        for _ in 0..<3 { _ = try? await closure.authorize(makeRequest()) }
        #expect(throttled.refreshCount == 1)

        let offline = TokenService(behavior: .fail(OAuth2Error.transport(URLError(.notConnectedToInternet))))
        offline.store(offline.authentication("expired", stale: true))
        let window = Closure.make(offline, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for _ in 0..<6 { _ = try? await window.authorize(makeRequest()) }
        #expect(offline.refreshCount == 6)
    }

    @Test func afterInvalidGrantLaterRequestsFailWithNotAuthenticatedUntilANewLoginIsSaved() async throws {
        let service = TokenService(behavior: .fail(GrantRevoked()))
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let closure = Closure(store: store)
        _ = try? await closure.authorize(makeRequest())
        for _ in 0..<3 {
            await #expect {
                try await closure.authorize(makeRequest())
            } throws: { error in
                (error as? RefreshQueueError) == .notAuthenticated
            }
        }
        try store.save(service.authentication("new-login"))
        #expect(
            try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer new-login")
    }
}

/// A throttled answer with `Retry-After`, as `OAuth2Error` would carry it.
struct TokenEndpointRetryAfter: RefreshFailure {
    let seconds: TimeInterval
    var retryAfter: TimeInterval? { seconds }
}
