import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A token endpoint that asks for a pause of `seconds`.
struct PausingFailure: RefreshFailure {
    let seconds: TimeInterval
    var retryAfter: TimeInterval? { seconds }
}

/// Pauses and the refresh window, for refreshes ahead and for store failures.
@Suite("Pauses and the window, ahead of expiry and for stores", .timeLimit(.minutes(1)))
struct RefreshPauseAndWindowTests {
    /// Only tokens that already needed a refresh were tested against `Retry-After`: a refresh
    /// ahead asked to pause 60 s is not tried again within the pause, and is just after it.
    @Test func aRefreshAheadThatFailedWithRetryAfterIsNotTriedAgainWithinThePause() async throws {
        let service = TokenService(behavior: .fail(PausingFailure(seconds: 60)))
        service.store(service.authentication("ahead", recommended: true))
        let clock = ManualClock()
        let events = EventLog()
        let closure = Closure.make(service, events: events, clock: clock)
        // Signed at once; the refresh ahead starts beside it and fails with the pause.
        _ = try await closure.authorize(makeRequest())
        await events.wait(forEventStartingWith: "refresh ahead failed")
        #expect(service.refreshCount == 1)
        clock.advance(by: 59)
        let duringThePause = try await closure.authorize(makeRequest())
        #expect(duringThePause.value(forHTTPHeaderField: "Authorization") == "Bearer ahead")
        // A refresh ahead is reported as started before the request that recommended it returns.
        #expect(events.count("refresh ahead started") == 1)
        #expect(service.refreshCount == 1)
        clock.advance(by: 1)
        service.setBehavior(.succeed)
        _ = try await closure.authorize(makeRequest())
        #expect(events.count("refresh ahead started") == 2)
        await events.wait(forEventStartingWith: "refresh succeeded")
        #expect(service.refreshCount == 2)
    }

    /// A refresh ahead that keeps failing (or keeps bringing a token that recommends another) is
    /// tried again after 1 s, 2 s, 4 s … doubling up to a minute, and then every minute: each
    /// wait is kept to its end, and the next try comes right after it.
    @Test(arguments: [false, true])
    func refreshesAheadBackOffByDoublingUpToAMinute(succeeding: Bool) async throws {
        let service = TokenService(behavior: .fail(ExampleError(code: 3)))
        if succeeding {
            service.setBehavior(
                .custom { _ in Future(value: service.authentication("again-\(service.refreshCount)", recommended: true))
                })
        }
        service.store(service.authentication("ahead", recommended: true))
        let clock = ManualClock()
        let events = EventLog()
        // The window, which counts failures, is kept out of the way: only the back-off stops them here.
        let closure = Closure.make(service, refreshWindow: .unlimited, events: events, clock: clock)
        let ended = succeeding ? "refresh succeeded" : "refresh ahead failed"
        _ = try await closure.authorize(makeRequest())
        for (tries, wait) in zip(1..., [1.0, 2, 4, 8, 16, 32, 60, 60]) {
            await events.wait(forEventStartingWith: ended, count: tries)
            clock.advance(by: wait - 0.25)
            _ = try await closure.authorize(makeRequest())
            #expect(events.count("refresh ahead started") == tries, "tried again within \(wait) s")
            clock.advance(by: 0.25)
            _ = try await closure.authorize(makeRequest())
            #expect(events.count("refresh ahead started") == tries + 1, "not tried again after \(wait) s")
        }
        await events.wait(forEventStartingWith: ended, count: 9)
        #expect(service.refreshCount == 9)
    }

    /// `refreshIfNeeded` succeeds at once, without a refresh, for a token that still works while a
    /// `Retry-After` pause runs: here after the back-off of the failed refresh ahead has passed,
    /// so only the pause stops it; once the pause is over it refreshes.
    @Test func refreshIfNeededLeavesAWorkingTokenAloneWhileAPauseRuns() async throws {
        let service = TokenService(behavior: .fail(PausingFailure(seconds: 60)))
        service.store(service.authentication("ahead", recommended: true))
        let clock = ManualClock()
        let events = EventLog()
        let closure = Closure.make(service, refreshWindow: .unlimited, events: events, clock: clock)
        _ = try await closure.authorize(makeRequest())
        await events.wait(forEventStartingWith: "refresh ahead failed")
        clock.advance(by: 2)
        try await closure.refreshIfNeeded()
        #expect(service.refreshCount == 1)
        clock.advance(by: 58)
        service.setBehavior(.succeed)
        try await closure.refreshIfNeeded()
        #expect(service.refreshCount == 2)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
    }

    /// The window's last place is kept for a token that needs a refresh: `refreshIfNeeded` does
    /// not spend it on one that only recommends a refresh, and succeeds at once; with two places
    /// left it refreshes.
    @Test(arguments: [(2, 1), (3, 2)])
    func refreshIfNeededKeepsTheWindowsLastPlace(maximumRefreshes: Int, refreshes: Int) async throws {
        let service = TokenService(behavior: .fail(ExampleError(code: 1)))
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: maximumRefreshes, interval: 30),
            clock: ManualClock())
        // One refresh the server refused: counted.
        await #expect(throws: ExampleError(code: 1)) { try await closure.authorize(makeRequest()) }
        service.setBehavior(.succeed)
        closure.adopt(service.authentication("ahead", recommended: true))
        try await closure.refreshIfNeeded()
        #expect(service.refreshCount == refreshes)
    }

    /// A store that cannot be read now (a locked device) is no loop: however often a refresh
    /// meets it, the window is not used up, and each request gets the store's error.
    @Test func storeReadFailuresDoNotUseUpTheWindow() async throws {
        let unreadable = RefreshQueueError.authenticationUnreadable(
            AuthenticationStoreError.io(operation: "read the stored file", errno: EACCES))
        let service = TokenService(behavior: .fail(unreadable))
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30), clock: ManualClock())
        for _ in 1...5 {
            await #expect(throws: unreadable) { try await closure.authorize(makeRequest()) }
        }
        #expect(service.refreshCount == 5)
        // A failure the server answered is counted: the third is refused without a refresh.
        service.setBehavior(.fail(ExampleError(code: 1)))
        for _ in 1...2 {
            await #expect(throws: ExampleError(code: 1)) { try await closure.authorize(makeRequest()) }
        }
        await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        #expect(service.refreshCount == 7)
    }
}
