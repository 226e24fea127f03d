import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RefreshingRequestClosure with real URLSession traffic against the stub on loopback.
@Suite("Refresh over HTTP", .timeLimit(.minutes(5)))
struct RefreshOverHTTPTests {
    /// A started stub and an app logged in to it, with an access token that has expired.
    ///
    /// The session's timeout is short: on Linux, URLSession waits out the whole timeout when a
    /// kept-alive connection is dropped without an answer (the `closeWithoutResponse` fault).
    private func expiredLogin(rotation: Bool = false) async throws -> (SpotifyStub, StubAccounts, StubAuthentication) {
        let stub = try StubHarness.startedStub()
        stub.rotatesRefreshTokens = rotation
        let accounts = StubAccounts(stub: stub, session: StubHarness.makeSession(timeout: 5))
        let authentication = try await accounts.logIn()
        stub.expireAccessTokens()
        stub.resetCounters()
        return (stub, accounts, authentication.expired)
    }

    /// A closure holding `expired`, whose refresh is sent only once `count` requests wait for it.
    ///
    /// For the tests whose refresh fails: a request a loaded machine starts late would otherwise
    /// arrive after the failure and start a refresh of its own, which the stub answers without the
    /// fault.
    private func holdingUntilAllWait(_ count: Int, _ expired: StubAuthentication)
        -> RefreshingRequestClosure<StubAuthentication>
    {
        let allWaiting = Completions<Void>()
        var gated = expired.accounts
        gated.beforeRefresh = { await allWaiting.wait(for: 1) }
        return .holding(
            expired.refreshing(through: gated),
            onEvent: { event in
                if case .requestWaiting(let waiting) = event, waiting == count { allWaiting.record(0, ()) }
            })
    }

    @Test(.exclusive) func twoHundredConcurrentRequestsWithAnExpiredTokenCauseExactlyOneRefresh() async throws {
        let (stub, accounts, expired) = try await expiredLogin(rotation: true)
        defer { stub.stop() }
        let closure = RefreshingRequestClosure.holding(expired)
        let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<200 {
                group.addTask { await accounts.me(through: closure) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stub.counters.refreshTokenGrants == 1)
        #expect(stub.counters.reuseDetections == 0)
        #expect(results.count == 200)
        #expect(results.allSatisfy { (try? $0.get()) == 200 })
    }

    @Test(.exclusive) func shortLivedTokensAreRefreshedAsOftenAsTheyExpireWithoutASingleRejectedRequest() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.accessTokenLifetime = 0.3
        stub.rotatesRefreshTokens = true
        // Refreshed with two thirds of 0.3 s left: 32 workers on two cores under the thread
        // sanitizer take up to ~0.1 s per request, and a signed request must arrive in time.
        let accounts = StubAccounts(stub: stub, session: StubHarness.makeSession(timeout: 20), leewayFraction: 2.0 / 3)
        let closure = RefreshingRequestClosure.holding(
            try await accounts.logIn(), refreshWindow: .init(maximumRefreshes: 1000, interval: 30))
        stub.resetCounters()

        // That margin holds only while the machine keeps a normal pace. When tasks ready to run
        // wait a good part of it for a thread (blocking tests beside this one on two loaded
        // cores), a token can expire between its signing and its arrival: such a round proves
        // nothing about the margin, and another is run. In a round at a normal pace the API
        // rejects no request at all.
        var paced = false
        for _ in 0..<5 where !paced {
            let rejectedBefore = stub.counters.apiRequestsByStatus[401, default: 0]
            let (outcomes, longestStall) = await measuringPoolStalls {
                await Self.callMe(for: 3, workers: 32, accounts: accounts, closure: closure)
            }
            let rejected = stub.counters.apiRequestsByStatus[401, default: 0] - rejectedBefore
            let statuses = outcomes.compactMap { try? $0.get() }
            #expect(statuses.count == outcomes.count, "errors: \(outcomes.count - statuses.count)")
            #expect(!statuses.isEmpty)
            // A token that expired in flight is answered by the server's 401, one refresh and one
            // retry: a call ends in 401 only when its retry's token expired in flight as well.
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 401 })
            paced = longestStall < 0.05
            if paced {
                #expect(rejected == 0, "the API rejected \(rejected) of \(statuses.count) calls at a normal pace")
            }
        }
        // Should every round stall, the margin went untested. How many refreshes a run takes
        // depends on the machine's pace: the soak reports it.
        let counters = stub.counters
        #expect(counters.reuseDetections == 0)
        #expect(counters.refreshTokenGrants > 0)
    }

    /// `workers` tasks that call `GET /v1/me` one call after another for `duration` seconds,
    /// retrying once after a 401: every call's outcome.
    private static func callMe(
        for duration: TimeInterval, workers: Int, accounts: StubAccounts,
        closure: RefreshingRequestClosure<StubAuthentication>
    ) async -> [Result<Int, any Error>] {
        let deadline = ProcessInfo.processInfo.systemUptime + duration
        return await withTaskGroup(of: [Result<Int, any Error>].self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var outcomes: [Result<Int, any Error>] = []
                    while ProcessInfo.processInfo.systemUptime < deadline {
                        outcomes.append(await accounts.me(through: closure, retryingAfter401: true))
                    }
                    return outcomes
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    @Test func invalidGrantFailsEveryWaitingRequestWithReauthenticationRequiredAndSendsNoStaleToken()
        async throws
    {
        let (stub, accounts, expired) = try await expiredLogin()
        defer { stub.stop() }
        stub.injectFaults(.invalidGrant)
        let closure = holdingUntilAllWait(50, expired)
        let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<50 {
                group.addTask { await accounts.me(through: closure) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("expected the refresh's error, got \(result)")
                continue
            }
            #expect(error as? StubRefreshError == .reauthenticationRequired)
        }
        #expect(stub.counters.refreshTokenGrants + stub.counters.faultsInjected >= 1)
        #expect(stub.counters.apiRequestsByStatus.isEmpty, "no API request may go out with the stale token")
    }

    @Test(arguments: [Fault.internalServerError, .malformedJSON, .truncatedBody, .closeWithoutResponse])
    func aFailedRefreshFailsTheWaitingRequestsAndTheNextRequestRecovers(fault: Fault) async throws {
        let (stub, accounts, expired) = try await expiredLogin()
        defer { stub.stop() }
        stub.injectFaults(fault)
        let closure = holdingUntilAllWait(20, expired)
        let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<20 {
                group.addTask { await accounts.me(through: closure) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 20)
        for result in results {
            // The refresh's own error: the token endpoint's answer, or the transport's failure.
            guard case .failure(let error) = result, error is StubRefreshError || error is URLError else {
                Issue.record("expected the refresh's error, got \(result)")
                continue
            }
        }
        #expect(try await accounts.me(through: closure).get() == 200)
        #expect(stub.counters.apiRequestsByStatus[401] == nil)
    }

    @Test(.exclusive) func aHungRefreshTimesOutItsWaitersStartsNoSecondRefreshAndIsAbandonedAtTheLimit() async throws {
        let (stub, accounts, expired) = try await expiredLogin()
        defer { stub.stop() }
        stub.injectFaults(.hang)
        let closure = RefreshingRequestClosure.holding(expired, refreshTimeout: 2, abandonAfter: 3)
        // All twenty begin to wait at once, from this thread: a wait begun after the first
        // second would outlast the hung refresh and be served by the one after it. (Tasks of a
        // group can start seconds apart on a loaded machine.)
        let waits = Completions<Result<URLRequest, any Error>>()
        for index in 0..<20 {
            closure.authorize(URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))) {
                waits.record(index, $0)
            }
        }
        await waits.wait(for: 20)
        #expect(waits.duplicates.isEmpty)
        for result in waits.results.values {
            guard case .failure(RefreshQueueError.refreshTimedOut) = result else {
                Issue.record("expected refreshTimedOut, got \(result.map(\.url))")
                continue
            }
        }
        // The hung refresh still runs: this request waits for it, not for a second one, and once
        // it is abandoned (3 s after it started) a new refresh serves the request.
        #expect(stub.counters.refreshTokenGrants + stub.counters.faultsInjected == 1)
        #expect(try await accounts.me(through: closure).get() == 200)
        #expect(stub.counters.faultsInjected == 1)
    }
}

/// The URLSession adapter: a 401 for a token that expired in flight, or was revoked early.
@Suite("URLSession adapter over HTTP", .timeLimit(.minutes(5)))
struct URLSessionAdapterTests {
    @Test func requestsRejectedWith401AreRefreshedOnceAndSentAgain() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 20)
        let accounts = StubAccounts(stub: stub, session: session)
        let closure = RefreshingRequestClosure.holding(try await accounts.logIn())
        // The server expires the token early; the app still believes it is valid.
        stub.expireAccessTokens()
        stub.resetCounters()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
                    let (_, response) = try await closure.data(for: request, using: session)
                    return (response as? HTTPURLResponse)?.statusCode ?? 0
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test func aServerThatRejectsEveryTokenGetsOneRetryNotALoop() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 20)
        // The app believes tokens last an hour; the server expires each one at once.
        let accounts = StubAccounts(stub: stub, session: session, assumedLifetime: 3600)
        let closure = RefreshingRequestClosure.holding(try await accounts.logIn())
        stub.accessTokenLifetime = 0
        stub.expireAccessTokens()
        stub.resetCounters()
        let request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        let (_, response) = try await closure.data(for: request, using: session)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(stub.counters.apiRequestsByStatus[401] == 2)
    }

    @Test(.exclusive) func cancellingTheTaskCancelsAHangingTransfer() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 60)
        let closure = RefreshingRequestClosure<StubAuthentication>(
            options: .init(
                missingAuthentication: .sendUnsigned
            ),
            find: { nil }
        )
        stub.injectFaults(.hang)
        let task = Task {
            var request = URLRequest(url: stub.baseURL.appendingPathComponent("api/token"))
            request.httpMethod = "POST"
            return try await closure.data(for: request, using: session)
        }
        #expect(await StubHarness.eventually { stub.counters.faultsInjected == 1 })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    /// A task cancelled before it calls `data(for:using:)`: the request, signed without waiting,
    /// is never sent, and the call throws `CancellationError`, as the README says.
    @Test func aTaskCancelledBeforeTheCallSendsNothing() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 60)
        let closure = RefreshingRequestClosure<StubAuthentication>(
            options: .init(missingAuthentication: .sendUnsigned), find: { nil })
        stub.resetCounters()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await closure.data(
                for: URLRequest(url: stub.baseURL.appendingPathComponent("v1/me")), using: session)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(stub.counters.apiRequestsByStatus.isEmpty)
    }
}
