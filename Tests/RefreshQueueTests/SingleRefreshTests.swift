import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Never two refreshes of one token: timeouts belong to waits, a refresh runs until it ends (or
/// is abandoned), and a result that arrives late is handled for the generation it refreshed.
@Suite("One refresh per token, however long it takes", .timeLimit(.minutes(5)))
struct SingleRefreshTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test(.exclusive) func aRefreshOutlivingItsTimeoutStartsNoSecondRefreshAndItsLateTokenSignsLaterRequests()
        async throws
    {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        // The abandon limit far away: on a loaded machine the default (4 x 0.5 s) can pass before
        // the test completes the refresh, and an abandoned refresh may be followed by another.
        let closure = Closure.make(service, refreshTimeout: 0.5, abandonAfter: 60, events: events)

        let first = Results()
        closure.authorizeConcurrently(50, into: first)
        await first.wait(for: 50)
        #expect(first.results.values.allSatisfy { $0.refreshQueueError == .refreshTimedOut })

        // The refresh is still running: requests now wait for it rather than refresh again.
        let overrun = Results()
        closure.authorizeConcurrently(50, into: overrun)
        #expect(service.refreshCount == 1)
        #expect(overrun.count == 0)

        service.completePending()
        await overrun.wait(for: 50)
        #expect(overrun.results.values.allSatisfy { $0.authorization == "Bearer token-1" })
        let next = try await closure.authorize(makeRequest())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshCount == 1)
        #expect(events.descriptions.contains { $0.hasPrefix("refresh timed out") })
    }

    /// The closure as the plain initializer makes it, with a short wait: a refresh that runs many
    /// times longer than that wait is still the only one, however many waves of requests time out
    /// behind it (the default abandon limit is at least two minutes).
    @Test(.exclusive) func withOnlyAShortTimeoutARefreshRunningManyTimesLongerIsStillTheOnlyOne() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure(refreshTimeout: 0.2, find: service.find)

        // Six waves, each timing out after 0.2 s: well past 4 × the timeout.
        for _ in 0..<6 {
            let wave = Results()
            closure.authorizeConcurrently(20, into: wave)
            await wave.wait(for: 20)
            #expect(wave.results.values.allSatisfy { $0.refreshQueueError == .refreshTimedOut })
            #expect(service.refreshCount == 1)
        }

        let last = Results()
        closure.authorizeConcurrently(20, into: last)
        service.completePending()
        await last.wait(for: 20)
        #expect(last.results.values.allSatisfy { $0.authorization == "Bearer token-1" })
        #expect(service.refreshCount == 1)
    }

    @Test(.exclusive) func aLateSuccessOfAnAbandonedRefreshIsKeptWhenTheNextRefreshFailsWithReauthentication()
        async throws
    {
        // The first refresh hangs past the abandon limit; only then does a second one start.
        let (service, events, closure, early) = await aRefreshHungUntilAbandoned()
        #expect(early?.refreshQueueError == .refreshTimedOut)
        #expect(service.refreshCount == 1)
        let waiting = Results()
        closure.authorize(makeRequest()) { waiting.record(0, $0) }
        await service.started.wait(for: 2)

        // The first ends after all, with a token: it is adopted and serves the waiting request.
        service.completeOldest(with: .success(service.authentication("from-the-first")))
        await waiting.wait(for: 1)
        #expect(waiting.results[0]?.authorization == "Bearer from-the-first")

        // The second fails as if the refresh token were dead: that forgets only what it refreshed.
        service.completeOldest(with: .failure(GrantRevoked()))
        await events.wait(forEventStartingWith: "refresh failed")
        let next = try await closure.authorize(makeRequest())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer from-the-first")
        #expect(service.refreshCount == 2)
    }

    /// README, "One refresh at a time": should an abandoned refresh fail after all, "a failure that
    /// requires a new login (`invalid_grant`) forgets the authentication it was refreshing ...,
    /// and any other failure changes nothing".
    @Test(arguments: [true, false])
    func anAbandonedRefreshThatFailsLateForgetsTheTokenOnlyWhenANewLoginIsNeeded(newLogin: Bool) async throws {
        let (service, events, closure, _) = await aRefreshHungUntilAbandoned()
        #expect(service.findCount == 1)

        service.completePending(with: .failure(newLogin ? GrantRevoked() as any Error : ExampleError(code: 5)))
        await events.wait(forEventStartingWith: "refresh failed")
        service.setBehavior(.succeed)
        let next = try await closure.authorize(makeRequest())

        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        // Forgotten: the next request asks find() again. Kept: it refreshes what it holds.
        #expect(service.findCount == (newLogin ? 2 : 1))
        #expect(service.refreshCount == 2)
    }

    /// README, "One refresh at a time": "a `Retry-After` it brings back starts that pause", as
    /// for any refresh. The server asked for the pause whenever its answer came: the next request
    /// fails at once with that error, and no refresh starts.
    @Test func anAbandonedRefreshThatFailsLateWithRetryAfterStartsThatPause() async throws {
        let (service, events, closure, _) = await aRefreshHungUntilAbandoned()
        service.completePending(with: .failure(PleaseWait()))
        await events.wait(forEventStartingWith: "refresh failed")
        service.setBehavior(.succeed)
        await #expect(throws: PleaseWait.self) { _ = try await closure.authorize(makeRequest()) }
        #expect(service.refreshCount == 1)
    }

    /// A stale token whose refresh hangs until it is abandoned, and the answer of the request that
    /// waited for it; the refresh is still pending in `service`. The request must be answered
    /// within the refresh timeout: a second, not a fraction, for a test task may be scheduled late
    /// on a loaded machine.
    private func aRefreshHungUntilAbandoned() async
        -> (service: TokenService, events: EventLog, closure: Closure, early: Result<URLRequest, any Error>?)
    {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = Closure.make(service, refreshTimeout: 1, abandonAfter: 2, events: events)
        let early = Results()
        closure.authorize(makeRequest()) { early.record(0, $0) }
        await events.wait(forEventStartingWith: "refresh abandoned")
        await early.wait(for: 1)
        return (service, events, closure, early.results[0])
    }

    @Test func aRefreshWhoseFutureIsDroppedFailsItsWaitersAtOnce() async {
        let service = TokenService()
        // The refresh's work drops its completion a moment later without calling it.
        service.setBehavior(
            .custom { _ in
                Future { complete in
                    let kept = Protected<(@Sendable (Result<FakeAuthentication, any Error>) -> Void)?>(complete)
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { kept.withLock { $0 = nil } }
                }
            })
        service.store(service.authentication("expired", stale: true))
        // A clock that never moves: no wait can time out, so only the dropped future can end them.
        let closure = Closure.make(service, clock: ManualClock())
        let results = Results()
        closure.authorizeConcurrently(100, into: results)
        await results.wait(for: 100)
        for result in results.results.values {
            #expect(result.failure as? FutureError == .abandoned, "got \(result)")
        }
        #expect(service.refreshCount == 1)
    }

    @Test func aFutureDroppedInsideTheAppsOwnLockDoesNotDeadlockWhenCompletionsTakeThatLock() async {
        let appLock = NSLock()
        let pending = Protected<[@Sendable (Result<FakeAuthentication, any Error>) -> Void]>([])
        let service = TokenService(
            behavior: .custom { _ in
                Future { complete in
                    appLock.lock()
                    pending.withLock { $0.append(complete) }
                    appLock.unlock()
                }
            })
        service.store(service.authentication("expired", stale: true))
        let events = Protected(0)
        let closure = Closure(
            options: .init(
                onEvent: { _ in
                    appLock.lock()
                    events.withLock { $0 += 1 }
                    appLock.unlock()
                }
            ),
            find: service.find
        )
        let results = Completions<Bool>()
        for index in 0..<10 {
            closure.authorize(makeRequest()) { result in
                appLock.lock()
                defer { appLock.unlock() }
                results.record(index, result.failure as? FutureError == .abandoned)
            }
        }
        await service.started.wait(for: 1)
        // The app cancels its pending work under its own lock, dropping the completion.
        appLock.withLock { pending.withLock { $0.removeAll() } }
        await results.wait(for: 10, timeout: 20)
        #expect(results.results.values.allSatisfy { $0 })
    }

    @Test func theNextRequestAfterAnAbandonedFutureRefreshesAgain() async throws {
        try await expectAFailedRefreshThenARecovery(failingWith: .custom { _ in Future { _ in } }) { error in
            error as? FutureError == .abandoned
        }
    }
}

/// Refresh ahead: a token that recommends a refresh is still used while one refresh runs in the
/// background.
@Suite("Refresh ahead", .timeLimit(.minutes(5)))
struct RefreshAheadTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test(.exclusive) func twoHundredRequestsDuringATwoSecondBackgroundRefreshAreSignedAtOnceWithTheCurrentToken()
        async throws
    {
        let service = TokenService()
        // The token endpoint takes 2 s, and longer if the machine is slow to send the 200 requests:
        // it answers once both the 2 s have passed and the test has sent them.
        let sent = DispatchSemaphore(value: 0)
        service.setBehavior(
            .custom { _ in
                Future { complete in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
                        sent.wait()
                        complete(.success(service.authentication("refreshed")))
                    }
                }
            })
        service.store(service.authentication("current", recommended: true))
        let events = EventLog()
        let closure = Closure.make(service, events: events)
        // The first request loads the authentication and starts the refresh ahead.
        let first = try await closure.authorize(makeRequest())
        #expect(first.value(forHTTPHeaderField: "Authorization") == "Bearer current")
        await service.started.wait(for: 1)
        // The first request was answered through the line, and until the thread that answered it
        // has said so, later requests keep their place behind it: wait until one is signed at once.
        await Self.waitForTheFastPath(closure)

        let results = Results()
        let waited = Protected(0)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let returned = Protected(false)
            closure.authorize(makeRequest()) { result in
                if returned.current { waited.withLock { $0 += 1 } }
                results.record(index, result)
            }
            returned.withLock { $0 = true }
        }
        #expect(waited.current == 0)
        #expect(results.count == 200)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer current" })
        #expect(service.refreshCount == 1)
        sent.signal()

        await events.wait(forEventStartingWith: "refresh succeeded")
        let next = try await closure.authorize(makeRequest())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer refreshed")
        #expect(service.refreshCount == 1)
        #expect(!events.descriptions.contains { $0.hasPrefix("refresh held") })
    }

    /// Sends requests one at a time until one is signed before `authorize` returns. Each attempt
    /// waits for its own completion, so this ends as soon as nothing of the line is left to deliver.
    private static func waitForTheFastPath(_ closure: Closure) async {
        for _ in 0..<1_000 {
            let returned = Protected(false)
            let signedAtOnce: Bool = await withCheckedContinuation { continuation in
                closure.authorize(makeRequest()) { _ in continuation.resume(returning: !returned.current) }
                returned.withLock { $0 = true }
            }
            if signedAtOnce { return }
        }
    }

    @Test func aRefreshedTokenThatMerelyRecommendsARefreshIsUsedNotFailedAsExcessive() async throws {
        let service = TokenService()
        // A short-lived token judged after a stall: already in its leeway, still accepted.
        service.setBehavior(.custom { _ in Future(value: service.authentication("short-lived", recommended: true)) })
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(100, into: results)
        await results.wait(for: 100)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer short-lived" })
    }

    @Test func aFailedRefreshAheadKeepsTheCurrentTokenAndFailsNoRequest() async throws {
        let service = TokenService(behavior: .fail(ExampleError(code: 500)))
        service.store(service.authentication("current", recommended: true))
        let events = EventLog()
        let clock = ManualClock()
        let closure = Closure.make(service, events: events, clock: clock)
        for _ in 0..<20 {
            let signed = try await closure.authorize(makeRequest())
            #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer current")
        }
        await events.wait(forEventStartingWith: "refresh ahead failed")
        // It backs off on its own: no second attempt before time has passed.
        #expect(service.refreshCount == 1)
        clock.advance(by: 2)
        service.setBehavior(.succeed)
        _ = try await closure.authorize(makeRequest())
        await events.wait(forEventStartingWith: "refresh succeeded")
        #expect(
            try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
    }

    @Test func aFailingRefreshAheadLeavesTheWindowRoomForTheRefreshThatExpiryNeeds() async throws {
        let service = TokenService(behavior: .fail(ExampleError(code: 500)))
        let current = service.authentication("current", recommended: true)
        service.store(current)
        let events = EventLog()
        let clock = ManualClock()
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 3, interval: 600), events: events, clock: clock)
        for _ in 0..<10 {
            _ = try await closure.authorize(makeRequest())
            // Each attempt has ended before time moves on.
            await events.wait(forEventStartingWith: "refresh ahead failed", count: service.refreshCount)
            clock.advance(by: 61)
        }
        // Two attempts ahead at most: the third place in the window is kept for expiry.
        #expect(service.refreshCount == 2)
        service.setBehavior(.succeed)
        closure.adopt(service.authentication("current", stale: true))
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-3")
    }

    @Test func aRefreshAheadThatRequestsWaitedForFailsAsANeededOneWhenOnlyALoginHelps() async throws {
        struct Revoked: Error, RefreshFailure {
            var requiresReauthentication: Bool { true }
        }
        let service = TokenService(behavior: .hold)
        let age = Protected(Age.recommended)
        let finds = Protected(0)
        let events = EventLog()
        let closure = RefreshingRequestClosure<AgeingAuthentication>(
            options: .init(refreshTimeout: 0.2, onEvent: { events.append($0) }),
            find: {
                finds.withLock { $0 += 1 }
                return AgeingAuthentication(accessToken: "current", age: age, service: service)
            })
        _ = try await closure.authorize(makeRequest())
        await service.started.wait(for: 1)
        // The token is needed now: a request joins the refresh ahead and times out waiting for it.
        age.withLock { $0 = .needed }
        await #expect(throws: RefreshQueueError.refreshTimedOut) { try await closure.authorize(makeRequest()) }
        service.completePending(with: .failure(Revoked()))
        await events.wait(forEventStartingWith: "refresh failed")
        #expect(events.count("refresh ahead failed") == 0)
        // The revoked login's token is forgotten: the next request asks `find()` again instead of
        // refreshing the dead grant once more.
        age.withLock { $0 = .fresh }
        let next = try await closure.authorize(makeRequest())
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer current")
        #expect(finds.withLock { $0 } == 2)
        #expect(service.refreshCount == 1)
    }

    @Test func whenTheTokenBecomesNeededDuringARefreshAheadRequestsWaitForThatSameRefresh() async throws {
        let service = TokenService(behavior: .hold)
        let age = Protected(Age.recommended)
        let closure = RefreshingRequestClosure<AgeingAuthentication>(find: {
            AgeingAuthentication(accessToken: "current", age: age, service: service)
        })
        _ = try await closure.authorize(makeRequest())
        await service.started.wait(for: 1)
        // Time passes: the same authentication now needs its refresh.
        age.withLock { $0 = .needed }
        let results = Completions<Result<URLRequest, any Error>>()
        DispatchQueue.concurrentPerform(iterations: 100) { index in
            closure.authorize(makeRequest()) { results.record(index, $0) }
        }
        #expect(results.count == 0)
        service.completePending(with: .success(service.authentication("refreshed")))
        await results.wait(for: 100)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer refreshed" })
        #expect(service.refreshCount == 1)
    }
}

/// The app's own handles on the closure: a login to adopt, a refresh to ask for.
@Suite("adopt and refreshIfNeeded", .timeLimit(.minutes(5)))
struct AdoptAndRefreshIfNeededTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func adoptAfterALoginServesTheWaitingRequestsAndLaterOnes() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let results = Results()
        closure.authorizeConcurrently(20, into: results)
        await service.started.wait(for: 1)
        closure.adopt(service.authentication("logged-in"))
        await results.wait(for: 20)
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer logged-in" })
        // The refresh that was running belongs to the old login: its token is not adopted.
        service.completePending()
        let later = try await closure.authorize(makeRequest())
        #expect(later.value(forHTTPHeaderField: "Authorization") == "Bearer logged-in")
    }

    @Test func refreshIfNeededCompletesAtOnceForAFreshTokenAndRefreshesARecommendedOne() async throws {
        let service = TokenService()
        service.store(service.authentication("fresh"))
        let closure = Closure.make(service)
        try await closure.refreshIfNeeded()
        #expect(service.refreshCount == 0)
        closure.adopt(service.authentication("ageing", recommended: true))
        try await closure.refreshIfNeeded()
        #expect(service.refreshCount == 1)
        #expect(
            try await closure.authorize(makeRequest()).value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
    }

    @Test func refreshIfNeededJoinsARunningRefreshAheadAndReportsItsFailure() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("ageing", recommended: true))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        await service.started.wait(for: 1)
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        // Requests are not held by it.
        _ = try await closure.authorize(makeRequest())
        #expect(done.count == 0)
        service.completePending(with: .failure(ExampleError(code: 7)))
        await done.wait(for: 1)
        guard case .failure(let error) = done.results[0] else {
            Issue.record("expected the refresh's error, got \(String(describing: done.results[0]))")
            return
        }
        #expect(error as? ExampleError == ExampleError(code: 7))
        #expect(service.refreshCount == 1)
    }

    /// The app stores a new login and calls `invalidate()` while `refreshIfNeeded` waits for a
    /// refresh ahead: the caller is answered at once from what `find()` gives now, not when (or
    /// if) that refresh ends, and not told it is logged out; however the refresh then ends, it
    /// says nothing about the new login and answers nobody a second time.
    @Test(arguments: ["succeeds", "fails", "finds nobody logged in"])
    func refreshIfNeededAfterInvalidateAsksFindNotTheOldRefresh(outcome: String) async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("ageing", recommended: true))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        await service.started.wait(for: 1)
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        service.store(service.authentication("new-login"))
        closure.invalidate()
        // The old refresh is still running: nothing but `invalidate()` can have answered.
        await done.wait(for: 1)
        guard case .success = done.results[0] else {
            Issue.record("refreshIfNeeded answered \(String(describing: done.results[0]))")
            return
        }
        #expect(service.refreshCount == 1)
        switch outcome {
        case "succeeds": service.completePending()
        case "fails": service.completePending(with: .failure(ExampleError(code: 7)))
        default: service.completePending(with: .failure(RefreshQueueError.notAuthenticated))
        }
        #expect(closure.signsAtOnce(with: "Bearer new-login"))
        #expect(done.count == 1)
        // And after a logout stored the same way, it says so.
        service.store(nil)
        closure.invalidate()
        await #expect(throws: RefreshQueueError.notAuthenticated) { try await closure.refreshIfNeeded() }
    }

    /// `adopt(_:)` of a login that needs a refresh while `refreshIfNeeded` waits for the replaced
    /// login's refresh ahead: the caller is not told the token is fresh. It waits, as requests
    /// do, for the old refresh to end (one at a time) and then for the adopted login's own.
    @Test func refreshIfNeededWaitsForTheRefreshAnAdoptedLoginNeeds() async throws {
        let service = TokenService(behavior: .hold)
        let closure = Closure.make(service)
        closure.adopt(service.authentication("ageing", recommended: true))
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        await service.started.wait(for: 1)
        closure.adopt(service.authentication("expired-login", stale: true))
        #expect(!closure.signsAtOnce(with: "Bearer expired-login"))
        #expect(done.count == 0)
        // The old login's refresh ends (its result is not adopted); the adopted login's starts.
        service.completePending()
        await service.started.wait(for: 2)
        #expect(done.count == 0)
        service.completePending()
        await done.wait(for: 1)
        guard case .success = done.results[0] else {
            Issue.record("refreshIfNeeded answered \(String(describing: done.results[0]))")
            return
        }
        #expect(closure.signsAtOnce(with: "Bearer token-2"))
    }

    /// A closure holding a token that recommends a refresh, whose refresh ahead has started and is
    /// held until the test completes it, given up after `seconds` of real time. Waits read their
    /// own timeout (`seconds` too) from a clock that stands still, so that it cannot end a wait
    /// before the refresh is given up.
    private static func refreshingAhead(givenUpAfter seconds: TimeInterval) async -> (TokenService, EventLog, Closure) {
        let service = TokenService(behavior: .hold)
        let events = EventLog()
        let closure = Closure.make(
            service, refreshTimeout: seconds, abandonAfter: seconds, events: events, clock: ManualClock())
        closure.adopt(service.authentication("ageing", recommended: true))
        #expect(closure.signsAtOnce(with: "Bearer ageing"))
        await service.started.wait(for: 1)
        return (service, events, closure)
    }

    /// A refresh ahead given up after `abandonAfter` ends late with a fresh token while
    /// `refreshIfNeeded` waits for the next refresh ahead of the same token: the caller is answered
    /// with the fresh token held, not with what that next refresh later meets (here a failure
    /// that would otherwise say "log in again" while a working login is held).
    @Test(arguments: [false, true])
    func aLateResultAnswersTheRefreshIfNeededWaitingForTheNextRefresh(reauthentication: Bool) async throws {
        struct LogInAgain: Error, RefreshFailure {
            var requiresReauthentication: Bool { true }
        }
        let (service, events, closure) = await Self.refreshingAhead(givenUpAfter: 4)
        await events.wait(forEventStartingWith: "refresh abandoned")
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        await service.started.wait(for: 2)
        service.completeOldest(with: .success(service.authentication("fresh-from-the-first")))
        await done.wait(for: 1)
        guard case .success = done.results[0] else {
            Issue.record("refreshIfNeeded answered \(String(describing: done.results[0]))")
            return
        }
        // Answered by the late result, not only once the next refresh is given up in its turn.
        #expect(events.count("refresh abandoned") == 1)
        service.completeOldest(with: .failure(reauthentication ? LogInAgain() : ExampleError(code: 9)))
        #expect(closure.signsAtOnce(with: "Bearer fresh-from-the-first"))
        #expect(done.count == 1)
    }

    /// A refresh ahead given up after `abandonAfter` does not fail the `refreshIfNeeded` calls
    /// that waited for it before their own `refreshTimeout`: they decide again, as the line does,
    /// and wait for the next refresh ahead that may start now.
    @Test func refreshIfNeededOutlivesTheRefreshAheadItJoinedWhenThatIsGivenUp() async throws {
        let (service, events, closure) = await Self.refreshingAhead(givenUpAfter: 2)
        // Joins the running refresh ahead before it is given up.
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        await events.wait(forEventStartingWith: "refresh abandoned")
        await service.started.wait(for: 2)
        #expect(done.count == 0)
        service.completeOldest(with: .failure(ExampleError(code: 3)))
        service.completeOldest(with: .success(service.authentication("second-try")))
        await done.wait(for: 1)
        guard case .success = done.results[0] else {
            Issue.record("refreshIfNeeded answered \(String(describing: done.results[0]))")
            return
        }
        #expect(closure.signsAtOnce(with: "Bearer second-try"))
    }

    /// After a refresh ahead failed, a token that still works is kept until its back-off ends:
    /// `refreshIfNeeded` then succeeds at once, without a refresh, as documented.
    @Test func refreshIfNeededKeepsAWorkingTokenWhileNoRefreshAheadMayStart() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("ageing", recommended: true))
        let closure = Closure.make(service)
        _ = try await closure.authorize(makeRequest())
        await service.started.wait(for: 1)
        service.completePending(with: .failure(ExampleError(code: 7)))
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        await done.wait(for: 1)
        guard case .success = done.results[0] else {
            Issue.record("expected success, got \(String(describing: done.results[0]))")
            return
        }
        #expect(service.refreshCount == 1)
        #expect(closure.signsAtOnce(with: "Bearer ageing"))
    }

    /// `refreshIfNeeded` holds no request: a request sent right after it, while the refresh ahead
    /// it started or joined runs, is signed before `authorize` returns.
    @Test(arguments: [false, true])
    func requestsSentRightAfterRefreshIfNeededAreSignedAtOnce(aheadAlreadyRunning: Bool) async throws {
        var late = 0
        for round in 0..<100 {
            let service = TokenService(behavior: .hold)
            service.store(service.authentication("ageing-\(round)", recommended: true))
            let closure = Closure.make(service)
            if aheadAlreadyRunning {
                _ = try await closure.authorize(makeRequest())
                await service.started.wait(for: 1)
            } else {
                closure.adopt(service.authentication("ageing-\(round)", recommended: true))
            }
            let done = Completions<Result<Void, any Error>>()
            closure.refreshIfNeeded { done.record(0, $0) }
            if !closure.signsAtOnce(with: "Bearer ageing-\(round)") { late += 1 }
            #expect(done.count == 0)
            await service.started.wait(for: 1)
            service.completePending()
            await done.wait(for: 1)
            #expect(service.refreshCount == 1)
        }
        #expect(late == 0, "\(late) of 100 requests sent right after refreshIfNeeded were not signed at once")
    }

    /// Waiting beside the line for a refresh ahead that hangs, `refreshIfNeeded` still ends by
    /// `refreshTimeout`, once, with `refreshTimedOut`; a cancelled one ends at once, once.
    @Test func refreshIfNeededBesideTheLineEndsByTheTimeoutOrWhenCancelled() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("ageing", recommended: true))
        let closure = Closure.make(service, refreshTimeout: 0.3)
        closure.adopt(service.authentication("ageing", recommended: true))
        let done = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { done.record(0, $0) }
        let cancelled = closure.refreshIfNeeded { done.record(1, $0) }
        cancelled.cancel()
        #expect(closure.signsAtOnce(with: "Bearer ageing"))
        await done.wait(for: 2)
        guard case .failure(RefreshQueueError.refreshTimedOut) = done.results[0] else {
            Issue.record("expected refreshTimedOut, got \(String(describing: done.results[0]))")
            return
        }
        guard case .failure(RefreshQueueError.cancelled) = done.results[1] else {
            Issue.record("expected cancelled, got \(String(describing: done.results[1]))")
            return
        }
        #expect(done.duplicates.isEmpty)
        #expect(service.refreshCount == 1)
        service.completePending()
    }

    @Test func refreshIfNeededWithoutALoginFailsWithNotAuthenticated() async {
        let closure = Closure.make(TokenService(), missingAuthentication: .sendUnsigned)
        await #expect {
            try await closure.refreshIfNeeded()
        } throws: { error in
            (error as? RefreshQueueError) == .notAuthenticated
        }
    }
}

/// A store-backed refresh whose result the store no longer wants.
@Suite("Store-backed refresh and a store that changed meanwhile", .timeLimit(.minutes(5)))
struct StoreRefusalTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func aLogoutDuringTheRefreshIsNotUndoneAndTheWaitingRequestsFailAsNotAuthenticated() async {
        let (results, store) = await refreshing(whileTheStore: { try? $0.remove() })
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .notAuthenticated })
        #expect(store.load() == nil)
    }

    @Test func aLoginAsSomeoneElseDuringTheRefreshWinsAndTheWaitingRequestsUseIt() async {
        let (results, store) = await refreshing(whileTheStore: { store in
            try? store.save(store.load()!.service.authentication("someone-else"))
        })
        #expect(results.results.values.allSatisfy { $0.authorization == "Bearer someone-else" })
        #expect(store.load()?.accessToken == "someone-else")
    }

    /// Twenty requests wait for a refresh of what `store` holds; `change` happens to the store
    /// while it runs; then the refresh succeeds.
    private func refreshing(
        whileTheStore change: (InMemoryAuthenticationStore<FakeAuthentication>) -> Void
    ) async -> (Results, InMemoryAuthenticationStore<FakeAuthentication>) {
        let service = TokenService(behavior: .hold)
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let closure = Closure(store: store)
        let results = Results()
        closure.authorizeConcurrently(20, into: results)
        await service.started.wait(for: 1)
        change(store)
        service.completePending()
        await results.wait(for: 20)
        return (results, store)
    }
}

enum Age: Sendable {
    case fresh, recommended, needed
}

/// An authentication that ages while it is held: the test moves it from recommended to needed.
struct AgeingAuthentication: RefreshableAuthentication {
    let accessToken: String
    let age: Protected<Age>
    let service: TokenService

    var isRefreshNeeded: Bool { age.current == .needed }
    var isRefreshRecommended: Bool { age.current == .recommended }

    func refresh() -> Future<AgeingAuthentication> {
        service.refresh(service.authentication(accessToken)).map { fresh in
            AgeingAuthentication(accessToken: fresh.accessToken, age: Protected(.fresh), service: service)
        }
    }

    static func find() -> AgeingAuthentication? { nil }
}
