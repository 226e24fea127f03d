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
