import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the line does after a refresh only a new login cures, and while `find()` is slow.
@Suite("The line after a dead session and behind a slow find()", .timeLimit(.minutes(1)))
struct LineAfterFailuresTests {
    /// A refresh refused for good while a request waited: the dead token is forgotten, and the
    /// next request asks `find()` again (a new login) instead of sending the revoked refresh
    /// token once more.
    @Test func afterARefreshOnlyANewLoginCuresTheNextRequestAsksFindAgain() async throws {
        let service = TokenService(behavior: .hold)
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service)
        let waiting = Completions<Result<URLRequest, any Error>>()
        closure.authorize(makeRequest()) { waiting.record(0, $0) }
        await service.started.wait(for: 1)
        service.completePending(with: .failure(GrantRevoked()))
        await waiting.wait(for: 1)
        #expect(waiting.results[0]?.failure is GrantRevoked)
        service.store(service.authentication("new-login"))
        service.setBehavior(.succeed)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer new-login")
        #expect(service.refreshedFrom == ["expired"])
        #expect(service.findCount == 2)
    }

    /// Only a slow freshness read was tested: requests waiting for a `find()` that does not
    /// return are answered at `refreshTimeout` too, and the line goes on once it returns.
    @Test func requestsWaitingForASlowFindAreAnsweredAtRefreshTimeout() async throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let service = TokenService()
        let closure = Closure(
            options: .init(refreshTimeout: 0.3),
            find: {
                entered.signal()
                release.wait()
                return service.authentication("found")
            })
        let results = Completions<Result<URLRequest, any Error>>()
        let started = DispatchTime.now()
        for index in 0..<3 { closure.authorize(makeRequest()) { results.record(index, $0) } }
        entered.wait()
        #expect(await results.wait(for: 3, timeout: 10))
        let waited = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        #expect(waited >= 0.3)
        #expect(results.results.values.allSatisfy { $0.refreshQueueError == .refreshTimedOut })
        release.signal()
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer found")
        #expect(results.duplicates.isEmpty)
    }
}
