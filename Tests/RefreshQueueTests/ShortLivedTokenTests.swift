import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The refresh window stops loops, not refreshes that tokens' lifetimes call for: short-lived
/// tokens keep working with the default options, however often they expire.
@Suite("Short-lived tokens and the refresh window", .timeLimit(.minutes(5)))
struct ShortLivedTokenTests {
    /// A token of `lifetime` seconds: refresh ahead when half of it is left, needed when a tenth is.
    struct ShortToken: RefreshableAuthentication {
        static let lifetime: TimeInterval = 1

        let accessToken: String
        let expiresAt: TimeInterval
        /// What a refresh brings: a fresh token, or (a loop) one that already needs a refresh.
        let refreshesStale: Bool
        /// The refreshes of this token and of those refreshed from it.
        let refreshes: Protected<Int>

        static func fresh(stale: Bool = false, counting refreshes: Protected<Int>) -> ShortToken {
            ShortToken(
                accessToken: "short-\(UUID().uuidString)", expiresAt: ProcessInfo.processInfo.systemUptime + lifetime,
                refreshesStale: stale, refreshes: refreshes)
        }

        var remaining: TimeInterval { expiresAt - ProcessInfo.processInfo.systemUptime }
        var isRefreshNeeded: Bool { remaining < Self.lifetime / 10 }
        var isRefreshRecommended: Bool { remaining < Self.lifetime / 2 }

        func refresh() -> Future<ShortToken> {
            refreshes.withLock { $0 += 1 }
            // A token endpoint a few milliseconds away, which issues the token when it answers.
            return Future { [refreshesStale, refreshes] complete in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
                    let next =
                        refreshesStale
                        ? ShortToken(
                            accessToken: "stale-\(UUID().uuidString)", expiresAt: 0, refreshesStale: true,
                            refreshes: refreshes)
                        : Self.fresh(counting: refreshes)
                    complete(.success(next))
                }
            }
        }

        static func find() -> ShortToken? { nil }
    }

    /// Sends requests from `threads` threads for `seconds`, counting the outcomes by kind.
    private static func drive(
        _ closure: RefreshingRequestClosure<ShortToken>, threads: Int, seconds: TimeInterval
    ) -> (signed: Int, excessive: Int, other: [String]) {
        let tally = Protected((signed: 0, excessive: 0, other: [String]()))
        let end = ProcessInfo.processInfo.systemUptime + seconds
        let finished = DispatchGroup()
        for _ in 0..<threads {
            finished.enter()
            Thread {
                while ProcessInfo.processInfo.systemUptime < end {
                    let done = DispatchSemaphore(value: 0)
                    closure.authorize(makeRequest()) { result in
                        tally.withLock { tally in
                            switch result {
                            case .success: tally.signed += 1
                            case .failure(RefreshQueueError.excessiveRefresh): tally.excessive += 1
                            case .failure(let error): tally.other.append("\(error)")
                            }
                        }
                        done.signal()
                    }
                    done.wait()
                }
                finished.leave()
            }.start()
        }
        finished.wait()
        return tally.current
    }

    /// Measured before: with 1 s tokens and the default window, five refreshes, then every request
    /// refused with `excessiveRefresh`.
    @Test(.exclusive) func oneSecondTokensKeepWorkingWithTheDefaultOptions() async {
        let refreshes = Protected(0)
        let closure = RefreshingRequestClosure<ShortToken>(find: { ShortToken.fresh(counting: refreshes) })
        // On threads of their own: blocking the test's own thread for 12 s would starve the
        // cooperative pool that every other test's awaits run on.
        let outcome = await onAThreadOfItsOwn { Self.drive(closure, threads: 8, seconds: 12) }
        #expect(outcome.excessive == 0)
        #expect(outcome.other.isEmpty, "\(outcome.other.prefix(3))")
        #expect(outcome.signed > 1_000)
        // About two refreshes a second (ahead, at half the lifetime): far more than the window's five.
        #expect(refreshes.current > RefreshWindow.default.maximumRefreshes)
    }

    /// A loop: the stored token needs a refresh, and every refresh brings one that needs another.
    @Test(.exclusive) func aRefreshThatBringsAStaleTokenIsStoppedWithinTheDefaultWindow() async {
        let refreshes = Protected(0)
        let closure = RefreshingRequestClosure<ShortToken>(find: {
            ShortToken(accessToken: "stale", expiresAt: 0, refreshesStale: true, refreshes: refreshes)
        })
        let outcome = await onAThreadOfItsOwn { Self.drive(closure, threads: 8, seconds: 4) }
        #expect(refreshes.current >= 1 && refreshes.current <= 6)
        #expect(outcome.signed == 0)
        #expect(outcome.excessive > 0)
        #expect(outcome.other.isEmpty, "\(outcome.other.prefix(3))")
    }

    /// Refreshes at expiry that bring fresh tokens leave the window untouched, however many.
    @Test func refreshesAtExpiryDoNotUseUpTheWindow() async throws {
        let service = TokenService()
        let clock = ManualClock()
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 3, interval: 30), clock: clock)
        for round in 1...20 {
            closure.adopt(service.authentication("expired-\(round)", stale: true))
            let signed = try await closure.authorize(makeRequest())
            #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-\(round)")
        }
        #expect(service.refreshCount == 20)
    }

    /// A refreshed token the server rejects at once is a loop: the window counts each rejection.
    @Test func rejectionsOfRefreshedTokensUseUpTheWindow() async throws {
        let service = TokenService()
        let clock = ManualClock()
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 3, interval: 30), clock: clock)
        closure.adopt(service.authentication("expired", stale: true))
        var signed = try await closure.authorize(makeRequest())
        #expect(service.refreshCount == 1)
        for _ in 1...2 {
            signed = try await closure.reauthorize(signed)
        }
        #expect(service.refreshCount == 3)
        await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.reauthorize(signed) }
        #expect(service.refreshCount == 3)

        // A rejection of a token the app adopted (or `find()` gave) is no sign of a loop.
        clock.advance(by: 30)
        closure.adopt(service.authentication("adopted"))
        signed = try await closure.reauthorize(try await closure.authorize(makeRequest()))
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-4")
        for _ in 1...2 {
            signed = try await closure.reauthorize(signed)
        }
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-6")
        await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.reauthorize(signed) }
    }

    /// A token whose expiry the test decides: each refresh's result gets a flag of its own.
    struct ExpiringToken: RefreshableAuthentication {
        let accessToken: String
        let expired: Protected<Bool>
        /// The flags of the tokens refreshes made, in order.
        let issued: Protected<[Protected<Bool>]>

        var isRefreshNeeded: Bool { expired.current }

        func refresh() -> Future<ExpiringToken> {
            let flag = Protected(false)
            let number = issued.withLock { issued in
                issued.append(flag)
                return issued.count
            }
            return Future(value: ExpiringToken(accessToken: "token-\(number)", expired: flag, issued: issued))
        }

        static func find() -> ExpiringToken? { nil }
    }

    /// A refreshed token rejected because it expired on its way (it needs a refresh when the 401
    /// comes) is no loop: however often that happens, the window is not used up.
    @Test func rejectionsOfTokensThatExpiredOnTheirWayDoNotUseUpTheWindow() async throws {
        let issued = Protected<[Protected<Bool>]>([])
        let first = ExpiringToken(accessToken: "first", expired: Protected(true), issued: issued)
        let closure = RefreshingRequestClosure<ExpiringToken>(
            options: .init(refreshWindow: RefreshWindow(maximumRefreshes: 3, interval: 30), clock: ManualClock().now),
            find: { first })
        var signed = try await closure.authorize(makeRequest())
        for round in 2...8 {
            // The held token expires while the request is on its way; the server rejects it.
            issued.current.last?.withLock { $0 = true }
            signed = try await closure.reauthorize(signed)
            #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-\(round)")
        }
        #expect(issued.current.count == 8)
    }
}

/// What the window does not count, it must not let loop: refreshes ahead whose results recommend
/// a refresh on arrival, and refusal episodes that follow one another.
@Suite("Loops the window does not count", .timeLimit(.minutes(1)))
struct UncountedLoopTests {
    /// A leeway as long as the lifetime: every refreshed token recommends a refresh on arrival.
    /// Each request would start another refresh ahead; they wait 1 s, 2 s, 4 s … instead.
    @Test func refreshesAheadWhoseResultsRecommendARefreshBackOff() async throws {
        let service = TokenService()
        service.setBehavior(
            .custom { _ in Future(value: service.authentication("again-\(service.refreshCount)", recommended: true)) })
        service.store(service.authentication("first", recommended: true))
        let clock = ManualClock()
        let events = EventLog()
        let closure = Closure.make(service, events: events, clock: clock)
        for _ in 0..<20 {
            _ = try await closure.authorize(makeRequest())
            await events.wait(forEventStartingWith: "refresh succeeded", count: events.count("refresh ahead started"))
        }
        #expect(events.count("refresh ahead started") == 1)
        clock.advance(by: 1)
        for _ in 0..<20 {
            _ = try await closure.authorize(makeRequest())
            await events.wait(forEventStartingWith: "refresh succeeded", count: events.count("refresh ahead started"))
        }
        #expect(events.count("refresh ahead started") == 2)
        clock.advance(by: 1)
        _ = try await closure.authorize(makeRequest())
        #expect(events.count("refresh ahead started") == 2)
        clock.advance(by: 1)
        _ = try await closure.authorize(makeRequest())
        #expect(events.count("refresh ahead started") == 3)
    }

    /// Each episode of refusals is reported: once the window had room again, a later loop's
    /// refusal is news.
    @Test func aSecondEpisodeOfRefusalsIsReportedAgain() async throws {
        let service = TokenService(behavior: .stale)
        service.store(service.authentication("expired", stale: true))
        let clock = ManualClock()
        let events = EventLog()
        let closure = Closure.make(
            service, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30), events: events, clock: clock)
        for _ in 1...4 {
            await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        }
        #expect(events.count("refresh refused") == 1)
        clock.advance(by: 30)
        for _ in 1...4 {
            await #expect(throws: RefreshQueueError.excessiveRefresh) { try await closure.authorize(makeRequest()) }
        }
        #expect(events.count("refresh refused") == 2)
        #expect(service.refreshCount == 4)
    }
}
