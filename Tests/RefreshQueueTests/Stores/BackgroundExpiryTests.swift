import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

/// On iOS a store-backed refresh runs inside a background activity that the system may end at any
/// moment. The expiry is played here by hand, since Linux never ends one.
@Suite("A store-backed refresh whose background time runs out", .timeLimit(.minutes(1)))
struct BackgroundExpiryTests {
    /// A refresh through a token file holding `token` (stale), whose activity's expiry the test
    /// fires; the file store itself, to take its lock as another process would.
    private static func refresh(
        _ service: TokenService, directory: URL, expiry: Protected<(@Sendable () -> Void)?>
    ) throws -> (StoreBackedRefresh<FakeAuthentication>, FileAuthenticationStore<String>) {
        let file = try FileAuthenticationStore<String>(fileURL: directory.appendingPathComponent("token.json"))
        try file.save("stale")
        var refresh = StoreBackedRefresh<FakeAuthentication>(
            store: file, decode: { service.authentication($0, stale: true) }, encode: { $0.accessToken },
            scheme: .bearer, onReauthenticationRequired: nil, onEvent: nil)
        refresh.beginActivity = { onExpiry in
            expiry.withLock { $0 = onExpiry }
            return {}
        }
        return (refresh, file)
    }

    private static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("expiry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Observes `future`, counting its callbacks; returns the first result.
    private static func outcome(
        of future: Future<FakeAuthentication>, calls: Protected<Int>
    ) async -> Result<FakeAuthentication, any Error> {
        await withCheckedContinuation { continuation in
            future.observe { result in
                if calls.withLock({ count in
                    count += 1
                    return count
                }) == 1 {
                    continuation.resume(returning: result)
                }
            }
        }
    }

    private static func fired(_ expiry: Protected<(@Sendable () -> Void)?>) async throws {
        for _ in 0..<2_000 where expiry.current == nil {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        try #require(expiry.current != nil, "the refresh never began its activity")
        expiry.current?()
    }

    /// Fires the background expiry and returns the refresh's failure; records an issue and
    /// returns `nil` when the refresh succeeded instead.
    private static func failureAfterExpiry(
        _ expiry: Protected<(@Sendable () -> Void)?>, of future: Future<FakeAuthentication>, calls: Protected<Int>
    ) async throws -> (any Error)? {
        try await fired(expiry)
        let result = await outcome(of: future, calls: calls)
        guard case .failure(let error) = result else {
            Issue.record("the refresh succeeded after its background time ran out")
            return nil
        }
        #expect(error is BackgroundTimeExpired)
        return error
    }

    @Test func expiryWhileWaitingForTheLockFailsTheRefreshOnceAndTheLockIsGivenBackWhenTaken() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = TokenService(behavior: .succeed)
        let expiry = Protected<(@Sendable () -> Void)?>(nil)
        let (refresh, file) = try Self.refresh(service, directory: directory, expiry: expiry)
        let otherProcess = try file.lock(timeout: 1)
        let calls = Protected(0)
        // The refresh waits for the lock half its budget. That wait must outlast the suite's time
        // limit: on a busy machine this task may be scheduled seconds late to fire the expiry, and
        // a lock timeout that came first would be the outcome instead.
        let future = refresh.refresh(
            service.authentication("stale", stale: true), within: RefreshBudget(abandonAfter: 240))
        guard let error = try await Self.failureAfterExpiry(expiry, of: future, calls: calls) else { return }
        #expect((error as? any RefreshFailure)?.isTransportFailure == true)
        // The refresh still waits for the lock; once it gets it, it must give it back untouched.
        otherProcess.unlock()
        try await Task.sleep(nanoseconds: 300_000_000)
        let again = try file.lock(timeout: 10)
        again.unlock()
        #expect(service.refreshCount == 0)
        #expect(file.load() == "stale")
        #expect(calls.current == 1)
    }

    @Test func expiryDuringTheRefreshFailsItOnceReleasesTheLockAtOnceAndTheLateAnswerCallsNobody() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = TokenService(behavior: .hold)
        let expiry = Protected<(@Sendable () -> Void)?>(nil)
        let (refresh, file) = try Self.refresh(service, directory: directory, expiry: expiry)
        let calls = Protected(0)
        let future = refresh.refresh(
            service.authentication("stale", stale: true), within: RefreshBudget(abandonAfter: 20))
        for _ in 0..<2_000 where service.refreshCount == 0 {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        try #require(service.refreshCount == 1, "the refresh never started")
        guard try await Self.failureAfterExpiry(expiry, of: future, calls: calls) != nil else { return }
        // Released at once: another process may take the lock while the refresh is still out.
        let otherProcess = try file.lock(timeout: 1)
        otherProcess.unlock()
        // The late answer ends the refresh without a second call.
        service.completePending()
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(calls.current == 1)
    }
}
