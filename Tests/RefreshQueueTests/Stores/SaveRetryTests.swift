import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

/// A refreshed token whose save fails for a moment is saved before the store's lock is let go.
/// Released at the first failed save, the lock let another process (here a second store on the
/// same file, which `flock` treats as another holder) find the old token and refresh it again:
/// its refresh token, which the server may have rotated already, went out twice, and a server with
/// strict rotation answers that by revoking the session.
@Suite("A store-backed refresh whose save fails for a moment", .timeLimit(.minutes(1)))
struct SaveRetryTests {
    /// A shared token file holding "T0" (stale), and the refresh of a process using it through
    /// `failures` failing saves; its pauses between attempts are recorded, not waited for.
    private struct Setup {
        let directory: URL
        let service = TokenService()
        let file: FileAuthenticationStore<String>
        let events = Protected<[RefreshEvent]>([])
        let pauses = Protected<[TimeInterval]>([])
        var refresh: StoreBackedRefresh<FakeAuthentication>

        init(failures: Int) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("save-retry-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            file = try FileAuthenticationStore<String>(fileURL: directory.appendingPathComponent("token.json"))
            try file.save("T0")
            refresh = Self.process(using: FailingSaves(file, failures: failures), service, events: events)
            refresh.pause = { [pauses] seconds in pauses.withLock { $0.append(seconds) } }
        }

        /// The refresh of a process using `store`, whose "T0" is stale.
        static func process<Store: AuthenticationStore<String>>(
            using store: Store, _ service: TokenService, events: Protected<[RefreshEvent]>? = nil
        ) -> StoreBackedRefresh<FakeAuthentication> {
            var refresh = StoreBackedRefresh<FakeAuthentication>(
                store: store, decode: { service.authentication($0, stale: $0 == "T0") }, encode: { $0.accessToken },
                scheme: .bearer, onReauthenticationRequired: nil,
                onEvent: { event in events?.withLock { $0.append(event) } })
            refresh.beginActivity = { _ in {} }
            return refresh
        }

        /// Another process: its own store on the same file.
        func otherProcess() throws -> StoreBackedRefresh<FakeAuthentication> {
            Self.process(
                using: try FileAuthenticationStore<String>(fileURL: directory.appendingPathComponent("token.json")),
                service)
        }

        var saveFailures: Int {
            events.current.filter { if case .saveFailed = $0 { true } else { false } }.count
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    private static func outcome(of future: Future<FakeAuthentication>) async -> Result<FakeAuthentication, any Error> {
        await withCheckedContinuation { continuation in
            future.observe { continuation.resume(returning: $0) }
        }
    }

    @Test func aSaveThatFailsOnceIsTriedAgainBeforeAnotherProcessCanRefreshTheOldToken() async throws {
        let setup = try Setup(failures: 1)
        defer { setup.remove() }
        let held = setup.service.authentication("T0", stale: true)
        let first = await Self.outcome(of: setup.refresh.refresh(held, within: RefreshBudget(abandonAfter: 20)))
        #expect(try first.get().accessToken == "token-1")
        #expect(setup.file.load() == "token-1")
        #expect(setup.pauses.current == [0.05])
        #expect(setup.saveFailures == 0)

        // The other process held "T0" too: it finds the saved token and adopts it.
        let other = await Self.outcome(
            of: try setup.otherProcess().refresh(held, within: RefreshBudget(abandonAfter: 20)))
        #expect(try other.get().accessToken == "token-1")
        #expect(setup.service.refreshedFrom == ["T0"])
    }

    @Test func aSaveThatKeepsFailingIsTriedThreeTimesMoreThenReportedOnceAndTheTokenStillUsed() async throws {
        let setup = try Setup(failures: .max)
        defer { setup.remove() }
        let held = setup.service.authentication("T0", stale: true)
        let result = await Self.outcome(of: setup.refresh.refresh(held, within: RefreshBudget(abandonAfter: 20)))
        #expect(try result.get().accessToken == "token-1")
        #expect(setup.pauses.current == [0.05, 0.2, 0.8])
        #expect(setup.saveFailures == 1)
        #expect(setup.file.load() == "T0")
        // The lock was let go.
        try setup.file.lock(timeout: 0).unlock()
    }

    @Test func noAttemptIsPlannedPastTheMomentTheRefreshWouldBeAbandoned() async throws {
        let setup = try Setup(failures: .max)
        defer { setup.remove() }
        let held = setup.service.authentication("T0", stale: true)
        let result = await Self.outcome(of: setup.refresh.refresh(held, within: RefreshBudget(abandonAfter: 0.5)))
        #expect(try result.get().accessToken == "token-1")
        #expect(!setup.pauses.current.contains(0.8))
        #expect(setup.saveFailures == 1)
    }

    /// On iOS the system may end the refresh's background time during the pauses: the lock must
    /// go then, not after the attempts left.
    @Test func noAttemptFollowsTheEndOfTheBackgroundTime() async throws {
        var setup = try Setup(failures: .max)
        defer { setup.remove() }
        let expiry = Protected<(@Sendable () -> Void)?>(nil)
        setup.refresh.beginActivity = { onExpiry in
            expiry.withLock { $0 = onExpiry }
            return {}
        }
        let pauses = setup.pauses
        setup.refresh.pause = { seconds in
            pauses.withLock { $0.append(seconds) }
            expiry.current?()
        }
        let held = setup.service.authentication("T0", stale: true)
        let result = await Self.outcome(of: setup.refresh.refresh(held, within: RefreshBudget(abandonAfter: 20)))
        #expect(throws: BackgroundTimeExpired.self) { try result.get() }
        // The expiry came in the first pause: no attempt after it.
        for _ in 0..<2_000 where (try? setup.file.lock(timeout: 0))?.unlock() == nil {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(setup.pauses.current == [0.05])
    }
}

/// A shared store, `base`, whose first `failures` saves throw, as a store out of reach for a
/// moment would.
private final class FailingSaves: CoordinatedAuthenticationStore, Sendable {
    struct Unreachable: Error {}

    private let base: FileAuthenticationStore<String>
    private let failures: Protected<Int>

    init(_ base: FileAuthenticationStore<String>, failures: Int) {
        self.base = base
        self.failures = Protected(failures)
    }

    func load() -> String? { base.load() }
    func read() throws -> String? { try base.read() }
    func remove() throws { try base.remove() }
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock { try base.lock(timeout: timeout) }

    func save(_ value: String) throws {
        let fails = failures.withLock { failures in
            defer { failures = max(failures - 1, 0) }
            return failures > 0
        }
        if fails { throw Unreachable() }
        try base.save(value)
    }
}
