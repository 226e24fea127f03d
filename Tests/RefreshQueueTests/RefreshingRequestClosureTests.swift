import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("RefreshingRequestClosure", .timeLimit(.minutes(5)))
struct RefreshingRequestClosureTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    // MARK: - Signing

    @Test func aValidTokenSignsTheRequestWithoutRefreshingAndOnceHeldWithoutWaiting() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure.make(service)
        let results = Results()
        // The first request loads the authentication on the closure's queue.
        closure.authorize(makeRequest()) { results.record(0, $0) }
        await results.wait(for: 1)
        // Later ones are signed before `authorize` returns.
        closure.authorize(makeRequest()) { results.record(1, $0) }
        #expect(results.count == 2)
        #expect(results.results[0]?.authorization == "Bearer valid")
        #expect(results.results[1]?.authorization == "Bearer valid")
        #expect(service.refreshCount == 0)
    }

    @Test func signingReplacesAnExistingAuthorizationHeaderOfAnyCaseAndKeepsOtherHeaders() async throws {
        let service = TokenService()
        service.store(service.authentication("fresh"))
        let closure = Closure.make(service)
        for name in ["Authorization", "authorization", "AUTHORIZATION"] {
            let request = makeRequest(headers: [name: "Bearer old", "Accept": "application/json"])
            let signed = try await closure.authorize(request)
            let fields = signed.allHTTPHeaderFields ?? [:]
            let authorizationFields = fields.filter { $0.key.lowercased() == "authorization" }
            #expect(authorizationFields.count == 1)
            #expect(authorizationFields.first?.value == "Bearer fresh")
            #expect(signed.value(forHTTPHeaderField: "Accept") == "application/json")
        }
    }

    @Test func customSchemeAndCustomHeaderNameAreUsed() async throws {
        let service = TokenService()
        service.store(service.authentication("abc"))
        let token = try await Closure.make(service, scheme: try AuthorizationScheme(scheme: "Token"))
            .authorize(makeRequest())
        #expect(token.value(forHTTPHeaderField: "Authorization") == "Token abc")
        let basic = try await Closure.make(service, scheme: .basic).authorize(makeRequest())
        #expect(basic.value(forHTTPHeaderField: "Authorization") == "Basic abc")
        let apiKey = try await Closure.make(service, scheme: try AuthorizationScheme(headerName: "X-API-Key"))
            .authorize(makeRequest(headers: ["x-api-key": "stale"]))
        #expect(apiKey.value(forHTTPHeaderField: "X-API-Key") == "abc")
        #expect(apiKey.allHTTPHeaderFields?.keys.filter { $0.lowercased() == "x-api-key" }.count == 1)
        #expect(apiKey.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test(
        arguments: ["", "abc\r\nX-Injected: 1", "abc\r", "abc\ndef", "abc\0", "a\u{7}b", " padded", "tök"]
            as [EscapedText])
    func aTokenThatCannotBeAHeaderValueIsRefused(token: EscapedText) async {
        let service = TokenService()
        service.store(service.authentication(token.value))
        let closure = Closure.make(service)
        await #expect(throws: RefreshQueueError.self) { try await closure.authorize(makeRequest()) }
        let results = Results()
        closure.authorize(makeRequest()) { results.record(0, $0) }
        await results.wait(for: 1)
        #expect(results.results[0]?.refreshQueueError == .invalidToken)
    }

    // MARK: - Single flight

    @Test(.exclusive) func tenThousandConcurrentRequestsCauseOneRefreshAndAreAllSignedWithTheNewToken() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(10_000, into: results)
        await service.started.wait(for: 1)
        service.completePending()
        await results.wait(for: 10_000)
        #expect(service.refreshCount == 1)
        #expect(results.duplicates.isEmpty)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer token-1" })
    }

    @Test func theRefreshedValueSignsLaterRequestsEvenWhenRefreshDidNotPersistIt() async throws {
        let service = TokenService()
        // find() keeps returning the expired authentication: refresh() does not persist.
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        for _ in 0..<100 {
            let signed = try await closure.authorize(makeRequest())
            #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        }
        #expect(service.refreshCount == 1)
        #expect(service.findCount == 1)
    }

    @Test func findIsCalledOnlyForTheFirstRequestNotPerRequest() async throws {
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(1_000, into: results)
        await results.wait(for: 1_000)
        for _ in 0..<100 { _ = try await closure.authorize(makeRequest()) }
        #expect(service.findCount == 1)
    }

    @Test func invalidateMakesTheNextRequestCallFindAgain() async throws {
        let service = TokenService()
        service.store(service.authentication("first"))
        let closure = Closure.make(service)
        #expect(try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer first")
        service.store(service.authentication("second"))
        #expect(try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer first")
        closure.invalidate()
        #expect(
            try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer second")
        #expect(service.findCount == 2)
    }

    @Test func waitingRequestsCompleteInArrivalOrder() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        for index in 0..<500 {
            closure.authorize(makeRequest()) { results.record(index, $0) }
        }
        await service.started.wait(for: 1)
        service.completePending()
        await results.wait(for: 500)
        #expect(results.order == Array(0..<500))
    }

    // MARK: - Missing authentication

    @Test func withoutAnAuthenticationRequestsFailWithNotAuthenticatedByDefault() async {
        let service = TokenService()
        let closure = Closure.make(service)
        await #expect {
            try await closure.authorize(makeRequest())
        } throws: { error in
            (error as? RefreshQueueError) == .notAuthenticated
        }
    }

    @Test func withoutAnAuthenticationRequestsGoOutUnsignedWhenThePolicyAllowsIt() async throws {
        let service = TokenService()
        let closure = Closure.make(service, missingAuthentication: .sendUnsigned)
        let request = try await closure.authorize(makeRequest(headers: ["Accept": "text/plain"]))
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(request.value(forHTTPHeaderField: "Accept") == "text/plain")
    }

    // MARK: - Failures and timeouts

    @Test func aFailedRefreshFailsEveryWaitingRequestAndTheNextRequestRefreshesAgain() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(1_000, into: results)
        await service.started.wait(for: 1)
        service.completePending(with: .failure(ExampleError(code: 400)))
        await results.wait(for: 1_000)
        for result in results.results.values {
            // The refresh's own error, as it failed: not wrapped, not replaced.
            #expect(result.failure as? ExampleError == ExampleError(code: 400), "got \(result)")
        }
        #expect(service.refreshCount == 1)

        service.setBehavior(.succeed)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        #expect(service.refreshCount == 2)
    }

    @Test(.exclusive) func aHungRefreshTimesOutAndALateSuccessIsStillAdopted() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        // The abandon limit far away, so that a loaded machine cannot reach it first.
        let closure = Closure.make(service, refreshTimeout: 0.1, abandonAfter: 60, events: events)
        let results = Results()
        closure.authorizeConcurrently(200, into: results)
        await results.wait(for: 200)
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .refreshTimedOut })

        // The refresh succeeds after all: its (possibly rotated) token must not be lost.
        service.completePending()
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshCount == 1)
        #expect(events.descriptions.contains { $0.hasPrefix("late refresh adopted") })
    }

    /// Once a newer refresh's result is held, an older, abandoned refresh that succeeds late is
    /// not adopted: it would replace a newer token with an older one.
    @Test func aLateSuccessOfAnAbandonedRefreshIsNotAdoptedOnceANewerOneWas() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = Closure.make(service, refreshTimeout: 0.1, abandonAfter: 0.2, events: events)
        await #expect(throws: RefreshQueueError.refreshTimedOut) { try await closure.authorize(makeRequest()) }
        await events.wait(forEventStartingWith: "refresh abandoned")
        service.setBehavior(.succeed)
        let newer = try await closure.authorize(makeRequest())
        #expect(newer.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        service.completeOldest(with: .success(service.authentication("older")))
        let later = try await closure.authorize(makeRequest())
        #expect(later.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        #expect(!events.descriptions.contains { $0.hasPrefix("late refresh adopted") })
        #expect(service.refreshCount == 2)
    }

    /// A refresh already given up that fails late caused no loop: the window keeps its place for
    /// the refresh that replaced it.
    @Test func aLateFailureOfAnAbandonedRefreshDoesNotUseUpTheWindow() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = Closure.make(
            service, refreshTimeout: 0.1, abandonAfter: 0.2,
            refreshWindow: RefreshWindow(maximumRefreshes: 1, interval: 600), events: events)
        await #expect(throws: RefreshQueueError.refreshTimedOut) { try await closure.authorize(makeRequest()) }
        await events.wait(forEventStartingWith: "refresh abandoned")
        service.completeOldest(with: .failure(ExampleError(code: 1)))
        service.setBehavior(.fail(ExampleError(code: 2)))
        await #expect(throws: ExampleError(code: 2)) { try await closure.authorize(makeRequest()) }
        await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        #expect(service.refreshCount == 2)
    }

    @Test(.exclusive) func aRefreshThatReentersTheSameClosureEndsInAnErrorWithinTheTimeout() async {
        let holder = Protected<Closure?>(nil)
        let service = TokenService()
        service.setBehavior(
            .custom { old in
                Future { complete in
                    // A refresh sent through the closure it refreshes for: it waits for itself.
                    holder.current?.authorize(makeRequest("/api/token")) { result in
                        complete(result.map { _ in old.service.authentication("never") })
                    }
                }
            })
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service, refreshTimeout: 0.2)
        holder.withLock { $0 = closure }
        await #expect {
            try await closure.authorize(makeRequest())
        } throws: { error in
            (error as? RefreshQueueError) == .refreshTimedOut
        }
        holder.withLock { $0 = nil }
    }

    @Test func requestsThePredicateExemptsSkipTheQueueWhileARefreshIsPending() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service, requiresAuthentication: { $0.url?.path != "/api/token" })
        let waiting = Results()
        closure.authorize(makeRequest()) { waiting.record(0, $0) }
        await service.started.wait(for: 1)
        let tokenRequest = try await closure.authorize(
            makeRequest("/api/token", headers: ["Authorization": "Basic client"]))
        #expect(tokenRequest.value(forHTTPHeaderField: "Authorization") == "Basic client")
        #expect(waiting.count == 0)
        service.completePending()
        await waiting.wait(for: 1)
        #expect(waiting.results[0]?.authorization == "Bearer token-1")
    }

    // MARK: - Loop protection

    @Test func moreRefreshesThanTheWindowAllowsFailWithExcessiveRefresh() async throws {
        // Every refresh brings a token that already needs one: a loop, which the window counts.
        let service = TokenService(behavior: .stale)
        let clock = ManualClock()
        let events = EventLog()
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 3, interval: 30), events: events, clock: clock)
        service.store(service.authentication("expired", stale: true))
        for _ in 1...3 {
            await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        }
        #expect(service.refreshCount == 3)
        // The fourth refresh is refused without asking the server, for every request, and the
        // refusal is reported once.
        for _ in 1...3 {
            await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        }
        #expect(service.refreshCount == 3)
        #expect(events.count("refresh refused") == 1)

        service.setBehavior(.succeed)
        clock.advance(by: 31)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-4")
    }

    @Test func aRefreshedValueThatStillNeedsARefreshDoesNotStartARefreshStorm() async {
        let service = TokenService(behavior: .stale)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(1_000, into: results)
        await results.wait(for: 1_000)
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .excessiveRefresh })
        #expect(service.refreshCount <= RefreshWindow.default.maximumRefreshes)
        for _ in 0..<50 {
            _ = try? await closure.authorize(makeRequest())
        }
        #expect(service.refreshCount <= RefreshWindow.default.maximumRefreshes)
    }

    @Test func transportErrorsDoNotCountAgainstTheRefreshWindow() async throws {
        let service = TokenService(behavior: .fail(URLError(.notConnectedToInternet)))
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for _ in 0..<10 {
            await #expect {
                try await closure.authorize(makeRequest())
            } throws: { error in
                error is URLError
            }
        }
        service.setBehavior(.succeed)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-11")
    }

    // MARK: - Cancellation and release

    @Test func cancellingAWaitingRequestCompletesItAtOnceAndItIsNeverSigned() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        let first = closure.authorize(makeRequest()) { results.record(0, $0) }
        let second = closure.authorize(makeRequest()) { results.record(1, $0) }
        let third = closure.authorize(makeRequest()) { results.record(2, $0) }
        await service.started.wait(for: 1)
        first.cancel()
        third.cancel()
        #expect(results.count == 2)
        #expect(results.results[0]?.refreshQueueError == .cancelled)
        #expect(results.results[2]?.refreshQueueError == .cancelled)
        #expect(first.isCancelled && third.isCancelled && !second.isCancelled)
        service.completePending()
        await results.wait(for: 3)
        #expect(results.results[1]?.authorization == "Bearer token-1")
        #expect(results.results[0]?.authorization == nil)
        #expect(results.duplicates.isEmpty)
        second.cancel()
        #expect(results.duplicates.isEmpty)
        #expect(!second.isCancelled)
    }

    @Test func cancellingTheTaskOfAnAsyncRequestThrowsCancellationError() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let task = Task { try await closure.authorize(makeRequest()) }
        await service.started.wait(for: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        service.completePending()
        let cancelledBeforeStart = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await closure.authorize(makeRequest())
        }
        // Signed without waiting: a request that needs no wait is not affected by cancellation.
        #expect((try? await cancelledBeforeStart.value) != nil)
    }

    @Test(.exclusive) func releasingTheClosureWhileRequestsWaitAnswersEveryRequestExactlyOnce() async {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let results = Results()
        do {
            let closure = Closure.make(service, refreshTimeout: 0.2)
            closure.authorizeConcurrently(1_000, into: results)
        }
        await results.wait(for: 1_000)
        #expect(results.duplicates.isEmpty)
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .refreshTimedOut })
        service.completePending()

        let signedAfterRelease = Results()
        do {
            let closure = Closure.make(service)
            closure.authorizeConcurrently(1_000, into: signedAfterRelease)
        }
        await service.started.wait(for: 2)
        service.completePending()
        await signedAfterRelease.wait(for: 1_000)
        #expect(signedAfterRelease.results.values.allSatisfy { $0.authorization == "Bearer token-2" })
    }

    @Test(.exclusive) func everyCompletionIsCalledExactlyOnceUnderTenThousandConcurrentRequestsWithCancellations() async
    {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        let tasks = Protected<[AuthorizationTask]>([])
        DispatchQueue.concurrentPerform(iterations: 10_000) { index in
            let task = closure.authorize(makeRequest()) { results.record(index, $0) }
            if index.isMultiple(of: 3) { tasks.withLock { $0.append(task) } }
        }
        await service.started.wait(for: 1)
        DispatchQueue.global().async { for task in tasks.current { task.cancel() } }
        service.completePending(with: .failure(ExampleError(code: 1)))
        await results.wait(for: 10_000)
        #expect(results.duplicates.isEmpty)
        #expect(service.refreshCount == 1)
        let outcomes = Set(
            results.results.values.map { result in
                result.refreshQueueError?.name ?? (result.failure is ExampleError ? "the refresh's error" : "\(result)")
            })
        #expect(outcomes.isSubset(of: ["cancelled", "the refresh's error"]))
    }

    // MARK: - Events

    @Test func eventsDescribeTheRefreshAndNeverContainAToken() async throws {
        let service = TokenService()
        service.store(service.authentication("expired-secret", stale: true))
        let events = EventLog()
        let closure = Closure.make(service, events: events)
        _ = try await closure.authorize(makeRequest())
        service.setBehavior(.fail(ExampleError(code: 1)))
        closure.invalidate()
        _ = try? await closure.authorize(makeRequest())
        let descriptions = events.descriptions
        #expect(descriptions.contains { $0.hasPrefix("refresh started") })
        #expect(descriptions.contains { $0.hasPrefix("refresh succeeded") })
        #expect(descriptions.contains { $0.hasPrefix("refresh failed") })
        #expect(descriptions.contains { $0.hasPrefix("queue resumed") })
        #expect(!descriptions.contains { $0.contains("secret") || $0.contains("token-") })
    }

    /// `dump` walks into stored properties: the closure, a waiting task (here one carrying the
    /// token the server rejected), the redirect delegate and the in-memory store show their state,
    /// not the token.
    @Test func dumpShowsNoToken() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("held-secret"))
        let closure = Closure.make(service)
        let signed = try await closure.authorize(makeRequest())
        let task = closure.reauthorize(signed) { _ in }
        await service.started.wait(for: 1)
        var dumped = ""
        dump(closure, to: &dumped)
        dump(task, to: &dumped)
        dump(RedirectSigningDelegate(closure), to: &dumped)
        dump(InMemoryAuthenticationStore(service.authentication("stored-secret")), to: &dumped)
        #expect(dumped.contains("holdsAuthentication: true"))
        #expect(dumped.contains("ticket: "))
        #expect(dumped.contains("holdsValue: true"))
        #expect(!dumped.contains("secret"), "\(dumped)")
        service.completePending()
    }
}

@Suite("RefreshingRequestClosure and invalidate()", .timeLimit(.minutes(5)))
struct InvalidationTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func invalidateDuringFindDoesNotKeepTheLoggedOutAuthentication() async throws {
        let service = TokenService()
        let holder = Protected<Closure?>(nil)
        let calls = Protected(0)
        let closure = Closure(
            find: {
                let call = calls.withLock { calls -> Int in
                    calls += 1
                    return calls
                }
                guard call == 1 else { return service.authentication("user-b") }
                // The user logs out while the first find() is still reading user A.
                holder.current?.invalidate()
                return service.authentication("user-a")
            })
        holder.withLock { $0 = closure }
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer user-b")
        holder.withLock { $0 = nil }
    }

    @Test func aRefreshEndingAfterInvalidateIsNotAdopted() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("user-a-expired", stale: true))
        let closure = Closure.make(service)
        let waiting = Results()
        closure.authorize(makeRequest()) { waiting.record(0, $0) }
        await service.started.wait(for: 1)
        closure.invalidate()
        service.store(service.authentication("user-b"))
        service.completePending()
        await waiting.wait(for: 1)
        // The request that waited is answered with what is valid now, not the refreshed token.
        #expect(waiting.results[0]?.authorization == "Bearer user-b")
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer user-b")
    }
}

@Suite("RefreshingRequestClosure after a 401", .timeLimit(.minutes(5)))
struct ReauthorizationTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func manyRequestsRejectedWithTheHeldTokenCauseOneRefresh() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("revoked"))
        let closure = Closure.make(service)
        let rejected = try await closure.authorize(makeRequest())
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            closure.reauthorize(rejected) { results.record(index, $0) }
        }
        await service.started.wait(for: 1)
        service.completePending()
        await results.wait(for: 1_000)
        #expect(service.refreshCount == 1)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer token-1" })
    }

    @Test func aRequestRejectedWithAnOlderTokenIsSignedAgainWithoutRefreshing() async throws {
        let service = TokenService()
        service.store(service.authentication("first"))
        let closure = Closure.make(service)
        let old = try await closure.authorize(makeRequest())
        _ = try await closure.reauthorize(old)
        #expect(service.refreshCount == 1)
        let again = try await closure.reauthorize(old)
        #expect(again.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshCount == 1)
    }

    /// "It carried the token held now … one refresh starts": also when the closure held nothing
    /// as the 401 came back (an `invalidate()` while the request was out) and `find()` gives the
    /// rejected token again. The retry went out with that very token, and nothing was refreshed.
    @Test func aRejectedTokenFoundAgainAfterAnInvalidateIsRefreshedNotSentAgain() async throws {
        let service = TokenService()
        service.store(service.authentication("rejected"))
        let closure = Closure.make(service)
        let sent = try await closure.authorize(makeRequest())
        closure.invalidate()
        let retry = try await closure.reauthorize(sent)
        #expect(retry.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshCount == 1)
        // Requests after it use the refreshed token too.
        let next = try await closure.authorize(makeRequest())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshCount == 1)
    }

    @Test func aRefreshThatReturnsTheSameTokenDoesNotLoop() async throws {
        let service = TokenService()
        service.setBehavior(.custom { old in Future(value: old) })
        service.store(service.authentication("same"))
        let closure = Closure.make(service)
        let rejected = try await closure.authorize(makeRequest())
        let resigned = try await closure.reauthorize(rejected)
        #expect(resigned.value(forHTTPHeaderField: "Authorization") == "Bearer same")
        #expect(service.refreshCount == 1)
    }

    @Test func requestsThatNeedNoAuthenticationAreReturnedUnchanged() async throws {
        let service = TokenService()
        service.store(service.authentication("a"))
        let closure = Closure.make(service, requiresAuthentication: { _ in false })
        let request = makeRequest(headers: ["Authorization": "Basic client"])
        #expect(try await closure.reauthorize(request) == request)
        #expect(service.refreshCount == 0)
    }
}

/// A server error that asks for a pause.
struct PleaseWait: RefreshFailure {
    var retryAfter: TimeInterval? { 120 }
}

/// An error that asks for a pause without end, or for none that makes sense.
struct AskingForever: RefreshFailure {
    let retryAfter: TimeInterval?
}

@Suite("RefreshingRequestClosure and Retry-After", .timeLimit(.minutes(5)))
struct RetryAfterTests {
    @Test func noRefreshStartsBeforeTheServersRetryAfterHasPassed() async throws {
        let service = TokenService(behavior: .fail(PleaseWait()))
        service.store(service.authentication("expired", stale: true))
        let clock = ManualClock()
        let closure = Closure.make(service, refreshWindow: .unlimited, clock: clock)
        for _ in 0..<10 {
            await #expect {
                try await closure.authorize(makeRequest())
            } throws: { error in
                error is PleaseWait
            }
        }
        #expect(service.refreshCount == 1)
        clock.advance(by: 121)
        service.setBehavior(.succeed)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        #expect(service.refreshCount == 2)
    }

    @Test func anEndlessRetryAfterIsAPauseOfADayAndANaNOneNoPause() async throws {
        for (delay, refreshes) in [(TimeInterval.infinity, 1), (.nan, 2)] {
            let service = TokenService(behavior: .fail(AskingForever(retryAfter: delay)))
            service.store(service.authentication("expired", stale: true))
            let clock = ManualClock()
            let closure = Closure.make(service, refreshWindow: .unlimited, clock: clock)
            for _ in 0..<2 {
                await #expect(throws: AskingForever.self) { try await closure.authorize(makeRequest()) }
            }
            #expect(service.refreshCount == refreshes, "Retry-After \(delay)")
            guard delay.isInfinite else { continue }
            clock.advance(by: 86_401)
            service.setBehavior(.succeed)
            _ = try await closure.authorize(makeRequest())
            #expect(service.refreshCount == 2)
        }
    }
}

/// A refresh error whose answers call back into the closure, as an app's own error type may:
/// the first answer asked for calls `invalidate()`.
struct ReentrantFailure: RefreshFailure {
    let closure: Protected<Closure?>
    let invalidated = Protected(false)

    private func touch() {
        let first = invalidated.withLock { invalidated in
            defer { invalidated = true }
            return !invalidated
        }
        if first { closure.withLock { $0 }?.invalidate() }
    }

    var isTransportFailure: Bool {
        touch()
        return false
    }

    var retryAfter: TimeInterval? {
        touch()
        return nil
    }

    var requiresReauthentication: Bool {
        touch()
        return false
    }
}

@Suite("RefreshingRequestClosure and user code", .timeLimit(.minutes(5)))
struct ReentrantUserCodeTests {
    @Test func anErrorWhoseAnswersCallBackIntoTheClosureDoesNotDeadlockTheRefresh() async {
        let box = Protected<Closure?>(nil)
        let service = TokenService(behavior: .fail(ReentrantFailure(closure: box)))
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service, refreshWindow: .unlimited)
        box.withLock { $0 = closure }
        let completions = Completions<Bool>()
        closure.authorize(makeRequest()) { result in
            completions.record(0, result.failure is ReentrantFailure)
        }
        await completions.wait(for: 1, timeout: 30)
        #expect(completions.results[0] == true)
        box.withLock { $0 = nil }
    }
}
