import Foundation
import LocalRedis
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

@testable import RefreshQueueRedis

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redis goes away while a refresh is needed, and comes back.
@Suite("Redis restart", .enabled(if: RedisFixture.enabled, RedisFixture.skipReason), .timeLimit(.minutes(3)))
struct RedisRestartTests {
    @Test func duringAnOutageRequestsFailWithATransportErrorAndAfterItOneRefreshServesThemAll() async throws {
        let stub = try StubHarness.startedStub()
        stub.rotatesRefreshTokens = true
        stub.detectsRefreshTokenReuse = true
        defer { stub.stop() }
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server, commandTimeout: 1),
            lockTTL: 40)
        let client = StubHarness.exampleClient(stub)
        let expired = RedisFleetTests.expired(try await StubHarness.logIn(stub, through: client))
        try store.save(expired)
        // Two refreshes in ten minutes at most: failures that counted would use them up at once.
        // The refresh after the restart runs in a task, which a loaded machine can resume seconds
        // late: its timeout leaves room for that (the outage's attempts fail at once anyway).
        let closure = RefreshingRequestClosure(
            client: client, store: store,
            options: .init(
                refreshTimeout: 30, abandonAfter: 40, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 600),
                requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true }))
        closure.adopt(OAuth2Authentication(token: expired, client: client))
        let request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        let refreshesBefore = stub.counters.tokenRequests

        server.stop()
        for attempt in 0..<6 {
            do {
                _ = try await closure.authorize(request)
                Issue.record("attempt \(attempt) was signed while Redis was down")
            } catch {
                let failure = error as? any RefreshFailure
                #expect(
                    failure?.isTransportFailure == true || Self.isUnreadable(error),
                    "attempt \(attempt): \(error)")
                #expect(!"\(error)".contains(expired.accessToken))
            }
        }
        #expect(stub.counters.tokenRequests == refreshesBefore, "a refresh was sent without the lock")

        try server.restart()
        // The connection the server closed is noticed before the next command goes out.
        _ = try await closure.authorize(request)
        let results = Completions<Bool>()
        for index in 0..<200 {
            closure.authorize(request) { results.record(index, (try? $0.get()) != nil) }
        }
        await results.wait(for: 200)
        #expect(results.results.values.allSatisfy { $0 })
        #expect(stub.counters.tokenRequests - refreshesBefore == 1)
        #expect(stub.counters.reuseDetections == 0)
        #expect(store.load()?.accessToken != expired.accessToken)
    }

    /// "A dropped connection is opened again on the next call": the call after a restart used to
    /// fail with `connectionClosed` (the server had closed the idle connection), and only the one
    /// after it connected again.
    @Test func theFirstCallAfterARestartConnectsAgainInsteadOfFailing() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<String>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server, commandTimeout: 2))
        try store.save("before")
        #expect(try store.read() == "before")
        try server.restart()
        // The restarted server reads its append-only file back.
        #expect(try store.read() == "before")
        try store.save("after")
        #expect(try store.read() == "after")
    }

    /// An outage reads as one: a wrapped `RedisError` showed as "RedisError 7" (its case's number).
    @Test func aRefreshQueueErrorWrappingARedisErrorShowsWhatWentWrong() {
        let failed = RefreshQueueError.authenticationUnreadable(RedisError.connectionClosed)
        #expect(failed.description.contains(RedisError.connectionClosed.description))
        #expect(!failed.description.contains("RedisError 7"))
    }

    private static func isUnreadable(_ error: any Error) -> Bool {
        if case RefreshQueueError.authenticationUnreadable = error { return true }
        return false
    }
}
