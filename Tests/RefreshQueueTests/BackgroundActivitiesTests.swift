import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

/// The process's background activities share one expiring activity of the system's, so that one
/// thread, not one per save and refresh, is parked to keep the time. Played with a system whose
/// activities run on threads of their own and expire when the test says.
@Suite("Background activities", .timeLimit(.minutes(1)))
struct BackgroundActivitiesTests {
    /// A system that parks each granted block on a thread of its own, as iOS does, and expires the
    /// newest grant on demand.
    final class FakeSystem: ExpiringActivitySystem, Sendable {
        private struct State {
            var grants: [@Sendable (Bool) -> Void] = []
            var parked = 0
            var mostParked = 0
        }
        private let state = Protected(State())
        /// Whether the system grants time: when not, the block runs once, with `true`.
        let grantsTime: Bool

        init(grantsTime: Bool = true) {
            self.grantsTime = grantsTime
        }

        var grantCount: Int { state.withLock { $0.grants.count } }
        var parked: Int { state.withLock { $0.parked } }
        var mostParked: Int { state.withLock { $0.mostParked } }

        func performExpiringActivity(reason: String, using block: @escaping @Sendable (Bool) -> Void) {
            state.withLock { $0.grants.append(block) }
            guard grantsTime else {
                block(true)
                return
            }
            let thread = Thread { [state] in
                state.withLock {
                    $0.parked += 1
                    $0.mostParked = max($0.mostParked, $0.parked)
                }
                block(false)
                state.withLock { $0.parked -= 1 }
            }
            thread.start()
        }

        /// Takes the newest grant's time back, as the system does: the block runs again with `true`.
        func expireNewest() {
            state.withLock { $0.grants.last }?(true)
        }

        /// Waits until exactly `count` blocks are parked.
        func waitUntilParked(_ count: Int) -> Bool {
            uptimeWhen(timeout: 10) { parked == count } != nil
        }
    }

    @Test func manyActivitiesAtOnceParkOneThreadAndTheLastEndReleasesIt() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let begun = (0..<50).map { _ in activities.begin(reason: "save", onExpiry: {}) }
        #expect(system.grantCount == 1)
        #expect(system.waitUntilParked(1))
        for activity in begun.dropLast() { activity.end() }
        #expect(system.parked == 1)
        begun.last?.end()
        #expect(system.waitUntilParked(0))
        #expect(system.mostParked == 1)
    }

    @Test func anActivityAfterTheLastEndedAsksForANewGrant() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let first = activities.begin(reason: "save", onExpiry: {})
        first.end()
        first.end()
        #expect(system.waitUntilParked(0))
        let second = activities.begin(reason: "refresh", onExpiry: {})
        #expect(system.grantCount == 2)
        #expect(system.waitUntilParked(1))
        second.end()
        #expect(system.waitUntilParked(0))
    }

    @Test func anExpiryEndsEveryActivityInsideItOnceAndReleasesTheThread() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let expiries = Protected([Int]())
        let begun = (0..<3).map { index in
            activities.begin(reason: "refresh", onExpiry: { expiries.withLock { $0.append(index) } })
        }
        #expect(system.waitUntilParked(1))
        system.expireNewest()
        #expect(expiries.current == [0, 1, 2])
        #expect(system.waitUntilParked(0))
        // Ending them afterwards, or a second expiry of the same grant, does nothing more.
        for activity in begun { activity.end() }
        system.expireNewest()
        #expect(expiries.current == [0, 1, 2])
        // The next activity is granted afresh and expires on its own.
        let later = activities.begin(reason: "refresh", onExpiry: { expiries.withLock { $0.append(9) } })
        #expect(system.grantCount == 2)
        system.expireNewest()
        #expect(expiries.current == [0, 1, 2, 9])
        later.end()
    }

    /// The locks go before the time: the system may suspend the app as soon as the parked block
    /// returns, so every `onExpiry` has run by then. Each expiry gives a parked thread let go too
    /// early a moment to return, which it must not.
    @Test func everyExpiryRunsBeforeTheParkedThreadIsLetGo() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let parkedAtExpiry = Protected([Int]())
        let begun = (0..<2).map { _ in
            activities.begin(
                reason: "refresh",
                onExpiry: {
                    _ = uptimeWhen(timeout: 0.3) { system.parked == 0 }
                    parkedAtExpiry.withLock { $0.append(system.parked) }
                })
        }
        #expect(system.waitUntilParked(1))
        system.expireNewest()
        #expect(parkedAtExpiry.current == [1, 1])
        #expect(system.waitUntilParked(0))
        for activity in begun { activity.end() }
    }

    @Test func anExpiryAfterEveryActivityEndedExpiresNothing() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let expired = Protected(0)
        let activity = activities.begin(reason: "save", onExpiry: { expired.withLock { $0 += 1 } })
        activity.end()
        system.expireNewest()
        #expect(expired.current == 0)
        #expect(system.waitUntilParked(0))
    }

    @Test func aSystemThatGrantsNoTimeExpiresTheActivityAtOnce() {
        let system = FakeSystem(grantsTime: false)
        let activities = BackgroundActivities(system: system)
        let expired = Protected(0)
        let activity = activities.begin(reason: "save", onExpiry: { expired.withLock { $0 += 1 } })
        #expect(expired.current == 1)
        activity.end()
        #expect(expired.current == 1)
        #expect(system.parked == 0)
    }

    @Test func withoutASystemNothingIsAskedAndNothingExpires() {
        let activities = BackgroundActivities(system: nil)
        let activity = activities.begin(reason: "save", onExpiry: { Issue.record("expired without a system") })
        activity.end()
    }

    /// Threads beginning and ending activities while the system expires grants: each expiry is
    /// called at most once, at most one thread is parked at a time, and none is left parked.
    @Test func threadsBeginningAndEndingActivitiesLeaveNoThreadParked() {
        let system = FakeSystem()
        let activities = BackgroundActivities(system: system)
        let expiries = Protected([Int: Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<200 {
                let id = thread * 1_000 + round
                let activity = activities.begin(reason: "stress") { expiries.withLock { $0[id, default: 0] += 1 } }
                if round % 50 == 0 { system.expireNewest() }
                activity.end()
            }
        }
        #expect(system.waitUntilParked(0))
        #expect(expiries.current.values.allSatisfy { $0 == 1 })
    }
}
