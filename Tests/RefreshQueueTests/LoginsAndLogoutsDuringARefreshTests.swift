import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sentences of the documentation articles, each checked through the public API only.
@Suite("Logins, logouts and bursts while a refresh runs", .timeLimit(.minutes(1)))
struct LoginsAndLogoutsDuringARefreshTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    /// Refreshes that a test completes by hand, counted.
    final class Refresher: Sendable {
        private struct State {
            var pending: [@Sendable (Result<Session, any Error>) -> Void] = []
            var calls = 0
            var answerAtOnce: Session?
        }

        private let state = Protected(State())
        let started = Completions<Int>()

        var calls: Int { state.withLock { $0.calls } }

        /// From now on, every refresh succeeds at once with `session`.
        func answerAtOnce(with session: Session) {
            state.withLock { $0.answerAtOnce = session }
        }

        func refresh() -> Future<Session> {
            let (number, atOnce) = state.withLock { state -> (Int, Session?) in
                state.calls += 1
                return (state.calls, state.answerAtOnce)
            }
            defer { started.record(number, number) }
            if let atOnce { return Future(value: atOnce) }
            return Future { complete in state.withLock { $0.pending.append(complete) } }
        }

        /// Completes every refresh still running with `result`.
        func completePending(with result: Result<Session, any Error>) {
            let pending = state.withLock { state in
                defer { state.pending.removeAll() }
                return state.pending
            }
            for complete in pending { complete(result) }
        }
    }

    struct Session: RefreshableAuthentication {
        let accessToken: String
        var isRefreshNeeded = false
        var isRefreshRecommended = false
        let refresher: Refresher

        func refresh() -> Future<Session> { refresher.refresh() }
        static func find() -> Session? { nil }
    }

    static func request() -> URLRequest {
        URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
    }

    static var uptime: TimeInterval { ProcessInfo.processInfo.systemUptime }

    /// A closure holding user A's token, which needs a refresh, and a request waiting for that
    /// refresh, which has started and hangs until the test completes it. Its timeout is far past the
    /// suite's time limit: a test task scheduled late on a busy machine never sees the waiting
    /// request time out, and a request that wrongly waits for the hanging refresh still fails.
    static func userARefreshing() async -> (
        Refresher, Protected<Session?>, RefreshingRequestClosure<Session>, Results
    ) {
        let refresher = Refresher()
        let stored = Protected<Session?>(Session(accessToken: "user-a", isRefreshNeeded: true, refresher: refresher))
        let closure = RefreshingRequestClosure<Session>(
            options: .init(refreshTimeout: 300), find: { stored.current })
        let waiting = Results()
        closure.authorize(Self.request()) { waiting.record(0, $0) }
        await refresher.started.wait(for: 1)
        return (refresher, stored, closure, waiting)
    }

    // MARK: - invalidate() while a refresh runs

    /// OAuth2AndStores, "After the login, and at logout": "If the closure still holds a token
    /// (another user's, say), call invalidate() after saving, and the next request reads the store
    /// again." `invalidate()`: "the next request calls find() again". Here the old user's refresh
    /// hangs: the new login must not wait for it.
    @Test func afterInvalidateTheNextRequestReadsTheStoreAtOnceWhileTheOldRefreshHangs() async throws {
        let (refresher, stored, closure, waiting) = await Self.userARefreshing()

        stored.withLock { $0 = Session(accessToken: "user-b", refresher: refresher) }
        closure.invalidate()
        let start = Self.uptime
        let signed = try await closure.authorize(Self.request())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer user-b")
        #expect(Self.uptime - start < 30, "the new login waited for the old user's refresh")
        // The request that waited for the old refresh goes on with the new login too.
        await waiting.wait(for: 1, timeout: 20)
        #expect((try? waiting.results[0]?.get())?.value(forHTTPHeaderField: "Authorization") == "Bearer user-b")
        #expect(refresher.calls == 1)
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }

    /// The same at logout: "To log out, remove the stored token and make the closure forget the
    /// one it holds"; the next request finds nobody logged in, at once.
    @Test func afterALogoutTheNextRequestFailsWithNotAuthenticatedAtOnceWhileTheOldRefreshHangs() async throws {
        let (refresher, stored, closure, waiting) = await Self.userARefreshing()

        stored.withLock { $0 = nil }
        closure.invalidate()
        let start = Self.uptime
        await #expect(throws: RefreshQueueError.notAuthenticated) { try await closure.authorize(Self.request()) }
        #expect(Self.uptime - start < 30, "the logged-out request waited for the old refresh")
        await waiting.wait(for: 1, timeout: 20)
        if case .failure(let error) = waiting.results[0] {
            #expect(error as? RefreshQueueError == .notAuthenticated)
        } else {
            Issue.record("the waiting request got \(String(describing: waiting.results[0]))")
        }
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }

    /// "never two refreshes of one token" still holds: a token found after `invalidate()` that
    /// needs a refresh itself waits for the old refresh to end before its own starts.
    @Test func aStaleLoginFoundAfterInvalidateIsRefreshedOnlyOnceTheOldRefreshEnded() async throws {
        let (refresher, stored, closure, waiting) = await Self.userARefreshing()

        stored.withLock { $0 = Session(accessToken: "user-b-stale", isRefreshNeeded: true, refresher: refresher) }
        closure.invalidate()
        closure.authorize(Self.request()) { waiting.record(1, $0) }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(refresher.calls == 1, "a second refresh started while the first one runs")
        refresher.answerAtOnce(with: Session(accessToken: "user-b-fresh", refresher: refresher))
        refresher.completePending(with: .success(Session(accessToken: "user-a-fresh", refresher: refresher)))
        await waiting.wait(for: 2, timeout: 20)
        for index in 0..<2 {
            let header = (try? waiting.results[index]?.get())?.value(forHTTPHeaderField: "Authorization")
            #expect(header == "Bearer user-b-fresh")
        }
        #expect(refresher.calls == 2)
    }

    // MARK: - refreshIfNeeded() and the abandon limit

    /// Errors, "refreshTimedOut": refreshIfNeeded "also fails with it when the refresh it waited
    /// for was given up after abandonAfter". For a token that needs a refresh, refreshIfNeeded
    /// waits in the line like a request: the line decides again when the refresh is given up, and
    /// a new refresh that succeeds in time answers it.
    @Test func refreshIfNeededInTheLineWaitsForTheRefreshThatReplacesAnAbandonedOne() async throws {
        let refresher = Refresher()
        let closure = RefreshingRequestClosure<Session>(
            options: .init(refreshTimeout: 5, abandonAfter: 5),
            find: { Session(accessToken: "expired", isRefreshNeeded: true, refresher: refresher) })
        let waiting = Results()
        closure.authorize(Self.request()) { waiting.record(0, $0) }
        await refresher.started.wait(for: 1)
        refresher.answerAtOnce(with: Session(accessToken: "fresh", refresher: refresher))
        // The probe joins 2 s later, so its own wait ends 2 s after the refresh is given up.
        try await Task.sleep(nanoseconds: 2_000_000_000)
        let probe = Completions<Result<Void, any Error>>()
        closure.refreshIfNeeded { probe.record(0, $0) }
        await probe.wait(for: 1, timeout: 20)
        if case .success = probe.results[0] {
        } else {
            Issue.record("refreshIfNeeded answered \(String(describing: probe.results[0]))")
        }
        #expect(refresher.calls == 2)
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }

    // MARK: - Threads

    /// HowTheQueueWorks, "Which thread runs your code", and CallbackBasedCode: where a completion
    /// handler of refreshIfNeeded(completion:) can run. One that waited for a refresh ahead when
    /// `adopt(_:)` is called is answered by the line, after the adopted login's freshness is
    /// read: on the closure's queue, not on the thread that adopts.
    @Test func aRefreshIfNeededWaitingForARefreshAheadIsAnsweredByTheLineAfterAdopt() async throws {
        let refresher = Refresher()
        let closure = RefreshingRequestClosure<Session>(
            find: { Session(accessToken: "ageing", isRefreshRecommended: true, refresher: refresher) })
        _ = try await closure.authorize(Self.request())
        await refresher.started.wait(for: 1)
        let key = DispatchSpecificKey<String>()
        let adopter = DispatchQueue(label: "adopter")
        adopter.setSpecific(key: key, value: "adopter")
        let thread = Completions<String>()
        closure.refreshIfNeeded { _ in thread.record(0, DispatchQueue.getSpecific(key: key) ?? "elsewhere") }
        adopter.sync { closure.adopt(Session(accessToken: "new-login", refresher: refresher)) }
        await thread.wait(for: 1, timeout: 20)
        #expect(thread.results[0] == "elsewhere")
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }

    // MARK: - A burst, and refusals at once

    /// HowTheQueueWorks, "A burst, step by step": the events, in the order the state machine
    /// produces them.
    @Test func aBurstReportsTheEventsInTheOrderTheArticleGives() async throws {
        let refresher = Refresher()
        let stale = Protected(false)
        struct Expiring: RefreshableAuthentication {
            let accessToken: String
            let stale: Protected<Bool>?
            let refresher: Refresher
            var isRefreshNeeded: Bool { stale?.current ?? false }
            func refresh() -> Future<Expiring> {
                let refresher = self.refresher
                return refresher.refresh().map {
                    Expiring(accessToken: $0.accessToken, stale: nil, refresher: refresher)
                }
            }
            static func find() -> Expiring? { nil }
        }
        let events = Protected<[RefreshEvent]>([])
        let recording = Protected(false)
        let closure = RefreshingRequestClosure<Expiring>(
            options: .init(onEvent: { event in if recording.current { events.withLock { $0.append(event) } } }),
            find: { Expiring(accessToken: "A", stale: stale, refresher: refresher) })
        _ = try await closure.authorize(Self.request())
        recording.withLock { $0 = true }
        stale.withLock { $0 = true }
        let results = Results()
        for index in 0..<20 { closure.authorize(Self.request()) { results.record(index, $0) } }
        await refresher.started.wait(for: 1)
        refresher.completePending(with: .success(Session(accessToken: "B", refresher: refresher)))
        await results.wait(for: 20)
        #expect(results.order == Array(0..<20))
        let described = events.current.map(\.description)
        let expected =
            ["request waiting (1 queued)", "refresh started (generation 1)"]
            + (2...20).map { "request waiting (\($0) queued)" }
        #expect(Array(described.prefix(21)) == expected)
        let tail = described.dropFirst(21).map { String($0.prefix(while: { !$0.isNumber })) }
        #expect(tail == ["refresh succeeded in ", "queue resumed (", "refresh held "])
        #expect(described.last?.hasPrefix("refresh held 20 requests") == true)
        #expect(described.dropFirst(22).first == "queue resumed (20 queued)")
    }

    /// CallbackBasedCode, "Sign a request": the completion runs "at once, on your thread, before
    /// authorize returns, when ... it is refused at once (...; no refresh may start now because of
    /// a Retry-After or a used-up refresh window)".
    @Test(arguments: ["Retry-After", "refresh window"])
    func aRequestRefusedBecauseNoRefreshMayStartCompletesBeforeAuthorizeReturns(reason: String) async throws {
        struct Throttled: Error, RefreshFailure {
            var retryAfter: TimeInterval? { 60 }
        }
        let refresher = Refresher()
        let closure = RefreshingRequestClosure<Session>(
            options: .init(refreshWindow: RefreshWindow(maximumRefreshes: 1, interval: 60)),
            find: { Session(accessToken: "expired", isRefreshNeeded: true, refresher: refresher) })
        let first = Results()
        closure.authorize(Self.request()) { first.record(0, $0) }
        await refresher.started.wait(for: 1)
        if reason == "Retry-After" {
            refresher.completePending(with: .failure(Throttled()))
        } else {
            refresher.completePending(
                with: .success(Session(accessToken: "stale", isRefreshNeeded: true, refresher: refresher)))
        }
        await first.wait(for: 1)
        let answered = Protected<Result<URLRequest, any Error>?>(nil)
        closure.authorize(Self.request()) { result in answered.withLock { $0 = result } }
        guard case .failure(let error) = answered.current else {
            Issue.record("not answered before authorize returned: \(String(describing: answered.current))")
            return
        }
        if reason == "Retry-After" {
            #expect(error is Throttled)
        } else {
            #expect(error as? RefreshQueueError == .excessiveRefresh)
        }
        #expect(refresher.calls == 1)
    }

    // MARK: - FileAuthenticationStore

    /// OAuth2AndStores, "FileAuthenticationStore": "The initializer throws invalidFileURL(_:) only
    /// for a URL that is not a file URL or that names a directory". A file name too long for its
    /// lock file (`<name>.lock`) is refused too.
    @Test func theFileStoreRefusesAFileNameTooLongForItsLockFile() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("article-claims-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(String(repeating: "a", count: 251))
        let error = #expect(throws: AuthenticationStoreError.self) { try FileAuthenticationStore<String>(fileURL: url) }
        // Errors: "a sentence a person can act on": it names the cause, not a directory.
        #expect(error?.description.contains("directory") == false, "\(String(describing: error))")
    }

    // MARK: - invalidate() and a rotated refresh token

    /// OAuth2AndStores, "Refresh-token rotation": "A rotated refresh token is valid exactly once,
    /// so losing it logs the user out. The closure makes sure that does not happen". When
    /// `invalidate()` comes while a refresh runs and `find()` gives the very authentication that is
    /// being refreshed (nothing new stored yet), that copy is spent once the refresh ends: the
    /// closure asks `find()` again, and gets what the refresh persisted, instead of refreshing the
    /// spent copy.
    @Test(arguments: ["ahead", "needed"])
    func aCopyOfWhatWasRefreshedFoundAfterInvalidateIsNotRefreshedAgain(kind: String) async throws {
        let refresher = Refresher()
        let stored = Protected(
            Session(
                accessToken: "ageing", isRefreshNeeded: kind == "needed", isRefreshRecommended: kind == "ahead",
                refresher: refresher))
        let closure = RefreshingRequestClosure<Session>(find: { stored.current })
        let waiting = Results()
        closure.authorize(Self.request()) { waiting.record(0, $0) }
        await refresher.started.wait(for: 1)
        closure.invalidate()
        closure.authorize(Self.request()) { waiting.record(1, $0) }
        try await Task.sleep(nanoseconds: 100_000_000)
        // The refresh persists its result, then completes, as `refresh()` is asked to.
        let fresh = Session(accessToken: "fresh", refresher: refresher)
        stored.withLock { $0 = fresh }
        refresher.completePending(with: .success(fresh))
        await waiting.wait(for: 2, timeout: 20)
        let signed = try await closure.authorize(Self.request())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer fresh")
        #expect(refresher.calls == 1, "the spent refresh token was sent again")
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }

    /// `invalidate()`: "A refresh that is running when you call this is not adopted when it ends:
    /// the requests waiting for it go on with what `find()` gives" — also when `find()` was asked
    /// before the new login was stored, and gave the old one again meanwhile.
    @Test func aLoginStoredAfterInvalidateIsWhatTheWaitingRequestGets() async throws {
        let refresher = Refresher()
        let stored = Protected(Session(accessToken: "user-a", isRefreshNeeded: true, refresher: refresher))
        let closure = RefreshingRequestClosure<Session>(find: { stored.current })
        let waiting = Results()
        closure.authorize(Self.request()) { waiting.record(0, $0) }
        await refresher.started.wait(for: 1)
        closure.invalidate()
        try await Task.sleep(nanoseconds: 100_000_000)
        stored.withLock { $0 = Session(accessToken: "user-b", refresher: refresher) }
        refresher.completePending(with: .success(Session(accessToken: "user-a-fresh", refresher: refresher)))
        await waiting.wait(for: 1, timeout: 20)
        #expect((try? waiting.results[0]?.get())?.value(forHTTPHeaderField: "Authorization") == "Bearer user-b")
        #expect(refresher.calls == 1)
    }

    /// The same when the refresh ends while that `find()` is still running: what it read before
    /// the refresh ended is the spent copy, and `find()` is asked again.
    @Test func aCopyReadByAFindThatOverlapsTheRefreshsEndIsNotKept() async throws {
        let refresher = Refresher()
        let stored = Protected(Session(accessToken: "user-a", isRefreshNeeded: true, refresher: refresher))
        let finds = Protected(0)
        let entered = Completions<Int>()
        let release = DispatchSemaphore(value: 0)
        let closure = RefreshingRequestClosure<Session>(find: {
            let value = stored.current
            let call = finds.withLock { finds -> Int in
                finds += 1
                return finds
            }
            if call == 2 {
                entered.record(0, call)
                release.wait()
            }
            return value
        })
        let waiting = Results()
        closure.authorize(Self.request()) { waiting.record(0, $0) }
        await refresher.started.wait(for: 1)
        closure.invalidate()
        await entered.wait(for: 1, timeout: 20)
        let fresh = Session(accessToken: "user-a-fresh", refresher: refresher)
        stored.withLock { $0 = fresh }
        refresher.completePending(with: .success(fresh))
        release.signal()
        await waiting.wait(for: 1, timeout: 20)
        #expect((try? waiting.results[0]?.get())?.value(forHTTPHeaderField: "Authorization") == "Bearer user-a-fresh")
        #expect(refresher.calls == 1, "the spent copy was refreshed again")
        refresher.completePending(with: .failure(URLError(.timedOut)))
    }
}
