import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One `Options` value configures every initializer the same way.
@Suite("Options", .timeLimit(.minutes(2)))
struct OptionsTests {
    @Test func theDefaultsAreTheDocumentedOnes() {
        let options = Closure.Options()
        #expect(options.refreshTimeout == 30)
        #expect(options.abandonAfter == nil)
        #expect(options.refreshWindow == .default)
        #expect(options.scheme == .bearer)
        #expect(options.missingAuthentication == .fail)
        #expect(options.origins == .all)
        #expect(options.requiresAuthentication(makeRequest()))
        #expect(options.completionQueue == nil)
        #expect(options.onEvent == nil)
        let closure = Closure()
        #expect(closure.options.refreshTimeout == 30)
        #expect(closure.options.abandonAfter == 120)
        #expect(closure.options.abandonAfter == 120)
    }

    @Test func theAbandonLimitIsNeverShorterThanTheTimeout() {
        #expect(Closure(options: .init(refreshTimeout: 10, abandonAfter: 5)).options.abandonAfter == 10)
        #expect(Closure(options: .init(refreshTimeout: 10, abandonAfter: 50)).options.abandonAfter == 50)
        #expect(Closure(options: .init(refreshTimeout: 60)).options.abandonAfter == 240)
        #expect(Closure(refreshTimeout: 60).options.abandonAfter == 240)
    }

    /// A short wait for requests does not make a slow refresh end sooner: by default a refresh
    /// gets at least two minutes before another of its token may start.
    @Test func theDefaultAbandonLimitIsFourTimesTheTimeoutAndAtLeastTwoMinutes() {
        #expect(Closure(options: .init(refreshTimeout: 10)).options.abandonAfter == 120)
        #expect(Closure(refreshTimeout: 0.2).options.abandonAfter == 120)
        #expect(Closure(refreshTimeout: 31).options.abandonAfter == 124)
    }

    @Test func theStoreBackedInitializerUsesTheSchemeThePredicateAndTheEvents() async throws {
        let service = TokenService()
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = RefreshingRequestClosure(
            store: store,
            options: .init(
                scheme: try AuthorizationScheme(headerName: "X-Token"),
                requiresAuthentication: { $0.url?.path != "/public" },
                onEvent: { events.append($0) }))
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "X-Token") == "token-1")
        #expect(signed.value(forHTTPHeaderField: "Authorization") == nil)
        let unsigned = try await closure.authorize(makeRequest("/public"))
        #expect(unsigned.value(forHTTPHeaderField: "X-Token") == nil)
        #expect(events.all.contains { if case .refreshSucceeded = $0 { return true } else { return false } })
    }

    @Test func theOAuth2InitializerUsesTheSchemeAndTheMissingAuthenticationPolicy() async throws {
        let client = TokenEndpointClient(
            tokenURL: URL(string: "https://accounts.example.test/api/token")!, clientID: "id")
        let empty = RefreshingRequestClosure(
            client: client, store: InMemoryAuthenticationStore<OAuth2Token>(),
            options: .init(missingAuthentication: .sendUnsigned))
        let unsigned = try await empty.authorize(makeRequest())
        #expect(unsigned.value(forHTTPHeaderField: "Authorization") == nil)

        let token = OAuth2Token(accessToken: "fresh", refreshToken: "r", expiresIn: 3_600)
        let custom = RefreshingRequestClosure(
            client: client, store: InMemoryAuthenticationStore(token),
            options: .init(scheme: try AuthorizationScheme(scheme: "Token")))
        let signed = try await custom.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Token fresh")
    }

    @Test func theClockOfTheOptionsDecidesWhenARefreshMayBeTriedAgain() async throws {
        let service = TokenService(behavior: .fail(OAuth2Error.server(status: 503, retryAfter: 60)))
        service.store(service.authentication("expired", stale: true))
        let clock = ManualClock()
        let closure = Closure(options: .init(clock: clock.now), find: service.find)
        let throttled = OAuth2Error.server(status: 503, retryAfter: 60)
        await #expect(throws: throttled) { try await closure.authorize(makeRequest()) }
        await #expect(throws: throttled) { try await closure.authorize(makeRequest()) }
        // The server asked for a minute; no wall clock passes one here, only the injected clock.
        #expect(service.refreshCount == 1)
        service.setBehavior(.succeed)
        clock.advance(by: 61)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        #expect(service.refreshCount == 2)
    }
}

/// `completionQueue` moves every completion of the callback API onto one queue.
@Suite("Options.completionQueue", .timeLimit(.minutes(2)))
struct CompletionQueueTests {
    private static let key = DispatchSpecificKey<String>()

    private func namedQueue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: Self.key, value: name)
        return queue
    }

    private func currentQueueName() -> String? { DispatchQueue.getSpecific(key: Self.key) }

    @Test func aRequestSignedAtOnceCompletesOnTheQueueNotInsideTheCall() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let delivery = namedQueue("delivery")
        let closure = Closure(options: .init(completionQueue: delivery), find: service.find)
        // Loaded first, so that the request below is signed at once rather than after `find`.
        _ = try await closure.authorize(makeRequest())
        let completions = Completions<String?>()
        // Held, so that a completion handed to the queue cannot run yet: one called inside the
        // call, on this thread, would be recorded before `authorize` returns.
        delivery.suspend()
        closure.authorize(makeRequest()) { result in
            completions.record(0, (try? result.get())?.value(forHTTPHeaderField: "Authorization"))
            completions.record(1, self.currentQueueName())
        }
        #expect(completions.results.isEmpty)
        delivery.resume()
        await completions.wait(for: 2)
        #expect(completions.results[0] == "Bearer valid")
        #expect(completions.results[1] == "delivery")
    }

    @Test func waitingRequestsCompleteOnTheQueueInArrivalOrderExactlyOnce() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure(options: .init(completionQueue: namedQueue("delivery")), find: service.find)
        let completions = Completions<String?>()
        for index in 0..<200 {
            closure.authorize(makeRequest()) { result in
                let signed = (try? result.get())?.value(forHTTPHeaderField: "Authorization") == "Bearer token-1"
                completions.record(index, signed ? self.currentQueueName() : "not signed")
            }
        }
        await service.started.wait(for: 1)
        service.completePending()
        await completions.wait(for: 200)
        #expect(completions.order == Array(0..<200))
        #expect(completions.duplicates.isEmpty)
        #expect(completions.results.values.allSatisfy { $0 == "delivery" })
        #expect(service.refreshCount == 1)
    }

    @Test func failuresCancellationsProbesAndRetriesCompleteOnTheQueue() async {
        let service = TokenService(behavior: .hold)
        let closure = Closure(options: .init(completionQueue: namedQueue("delivery")), find: service.find)
        let completions = Completions<String?>()
        // Nobody is logged in: a failure before any refresh.
        closure.authorize(makeRequest()) { _ in completions.record(0, self.currentQueueName()) }
        await completions.wait(for: 1)

        service.store(service.authentication("expired", stale: true))
        closure.invalidate()
        let task = closure.authorize(makeRequest()) { result in
            if case .failure(RefreshQueueError.cancelled) = result { completions.record(1, self.currentQueueName()) }
        }
        closure.refreshIfNeeded { _ in completions.record(2, self.currentQueueName()) }
        closure.reauthorize(makeRequest(headers: ["Authorization": "Bearer old"])) { _ in
            completions.record(3, self.currentQueueName())
        }
        task.cancel()
        await service.started.wait(for: 1)
        service.completePending()
        await completions.wait(for: 4)
        #expect(completions.duplicates.isEmpty)
        #expect((0..<4).allSatisfy { completions.results[$0] == "delivery" })
    }

    @Test func theRequestClosureDeliversAFailingEndpointOnTheQueue() async {
        let closure = Closure(options: .init(completionQueue: namedQueue("delivery")), find: { nil })
        let requestClosure: (FakeEndpoint, @escaping (Result<URLRequest, ProviderError>) -> Void) -> Void =
            closure.requestClosure { ProviderError.underlying($0) }
        let completions = Completions<String?>()
        let endpoint = FakeEndpoint(path: "/v1/me", buildError: ProviderError.requestMapping("bad"))
        requestClosure(endpoint) { result in
            if case .failure(.requestMapping) = result { completions.record(0, self.currentQueueName()) }
        }
        requestClosure(FakeEndpoint(path: "/v1/me")) { result in
            if case .failure(.underlying(RefreshQueueError.notAuthenticated)) = result {
                completions.record(1, self.currentQueueName())
            }
        }
        await completions.wait(for: 2)
        #expect(completions.results[0] == "delivery")
        #expect(completions.results[1] == "delivery")
    }
}

/// One protocol says what a refresh error means.
@Suite("RefreshFailure", .timeLimit(.minutes(2)))
struct RefreshFailureTests {
    /// Knows one thing only; the other answers are the protocol's defaults.
    struct Revoked: RefreshFailure {
        var requiresReauthentication: Bool { true }
    }

    @Test func unimplementedAnswersDefaultToNo() {
        struct Plain: RefreshFailure {}
        #expect(!Plain().requiresReauthentication)
        #expect(!Plain().isTransportFailure)
        #expect(Plain().retryAfter == nil)
        #expect(Revoked().requiresReauthentication)
        #expect(!Revoked().isTransportFailure)
    }

    @Test func aRefreshFailedErrorAnswersForWhatItWraps() {
        let throttled = RefreshQueueError.refreshFailed(OAuth2Error.server(status: 503, retryAfter: 7))
        #expect(throttled.retryAfter == 7)
        #expect(!throttled.isTransportFailure)
        #expect(!throttled.requiresReauthentication)
        let offline = RefreshQueueError.refreshFailed(URLError(.notConnectedToInternet))
        #expect(offline.isTransportFailure)
        #expect(offline.retryAfter == nil)
        #expect(RefreshQueueError.refreshFailed(Revoked()).requiresReauthentication)
        #expect(RefreshQueueError.notAuthenticated.requiresReauthentication)
        #expect(!RefreshQueueError.refreshTimedOut.requiresReauthentication)
        let day = RefreshQueueError.refreshFailed(OAuth2Error.server(status: 503, retryAfter: 1e12))
        #expect(day.retryAfter == 86_400)
    }

    @Test func anErrorOfTheAppThatRequiresANewLoginEmptiesTheStore() async {
        let service = TokenService(behavior: .fail(Revoked()))
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let called = Completions<Bool>()
        let closure = RefreshingRequestClosure(store: store) { error in
            called.record(0, (error as? RefreshQueueError)?.requiresReauthentication ?? (error is Revoked))
        }
        let completions = Completions<Result<URLRequest, any Error>>()
        closure.authorize(makeRequest()) { completions.record(0, $0) }
        await completions.wait(for: 1)
        await called.wait(for: 1)
        #expect(called.results[0] == true)
        #expect(store.load() == nil)
    }
}
