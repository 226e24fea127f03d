import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error that says the user must log in again, like OAuth 2.0 `invalid_grant`.
struct GrantRevoked: RefreshFailure {
    var requiresReauthentication: Bool { true }
}

@Suite("RefreshingRequestClosure built from a store", .timeLimit(.minutes(2)))
struct StoreBackedClosureTests {
    typealias Results = Completions<Result<URLRequest, any Error>>

    @Test func itLoadsFromTheStoreAndSavesEveryRefresh() async throws {
        let service = TokenService()
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let closure = Closure(store: store)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(store.load()?.accessToken == "token-1")
        #expect(service.refreshCount == 1)
    }

    @Test func aTokenAnotherProcessRefreshedMeanwhileIsAdoptedInsteadOfRefreshedAgain() async throws {
        let service = TokenService()
        // The first load (find) sees the expired token; by the time the refresh looks again,
        // another process has saved a fresh one.
        let store = ScriptedStore([
            service.authentication("expired", stale: true), service.authentication("from-another-process"),
        ])
        let closure = Closure(store: store)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer from-another-process")
        #expect(service.refreshCount == 0)
    }

    /// What another process saved is adopted only while it does not need a refresh itself: one
    /// that does is refreshed, from what the store holds.
    @Test func aTokenAnotherProcessSavedThatAlreadyNeedsARefreshIsRefreshedNotAdopted() async throws {
        let service = TokenService()
        let store = ScriptedStore([
            service.authentication("expired", stale: true), service.authentication("also-expired", stale: true),
        ])
        let closure = Closure(store: store)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshedFrom == ["also-expired"])
    }

    /// The log tells another process's refresh from one at the server, and the adoption comes
    /// before the refresh's end.
    @Test func anAdoptedTokenIsReportedAsAdoptedFromTheStore() async throws {
        let service = TokenService()
        let store = ScriptedStore([
            service.authentication("expired", stale: true), service.authentication("from-another-process"),
        ])
        let events = EventLog()
        let closure = Closure(store: store, options: .init(onEvent: { events.append($0) }))
        _ = try await closure.authorize(makeRequest())
        let names = events.all.map { "\($0)" }
        let adopted = try #require(names.firstIndex { $0.hasPrefix("adopted the authentication") })
        let succeeded = try #require(names.firstIndex { $0.hasPrefix("refresh succeeded") })
        #expect(adopted < succeeded)
        // A refresh at the server is not reported so.
        let refreshed = EventLog()
        let direct = Closure(
            store: InMemoryAuthenticationStore(service.authentication("expired", stale: true)),
            options: .init(onEvent: { refreshed.append($0) }))
        _ = try await direct.authorize(makeRequest())
        #expect(!refreshed.all.contains { if case .adoptedFromStore = $0 { true } else { false } })
    }

    /// Cause before effect: the refresh's failure is reported before the re-login callback it
    /// causes.
    @Test func theRefreshFailedEventComesBeforeTheReauthenticationCallback() async {
        let service = TokenService(behavior: .hold)
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let log = Protected([String]())
        let closure = Closure(
            store: store,
            options: .init(onEvent: { event in
                if case .refreshFailed = event { log.withLock { $0.append("refreshFailed") } }
            }),
            onReauthenticationRequired: { _ in log.withLock { $0.append("onReauthenticationRequired") } })
        let results = Results()
        closure.authorizeConcurrently(3, into: results)
        await service.started.wait(for: 1)
        service.completePending(with: .failure(GrantRevoked()))
        await results.wait(for: 3)
        #expect(uptimeWhen(timeout: 5) { log.current.count == 2 } != nil)
        #expect(log.current == ["refreshFailed", "onReauthenticationRequired"])
    }

    @Test func invalidGrantRemovesTheStoredAuthenticationAndCallsTheHandlerOnce() async {
        let service = TokenService(behavior: .hold)
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let handlerCalls = Protected(0)
        let closure = Closure(store: store, onReauthenticationRequired: { _ in handlerCalls.withLock { $0 += 1 } })
        let results = Results()
        closure.authorizeConcurrently(500, into: results)
        await service.started.wait(for: 1)
        service.completePending(with: .failure(GrantRevoked()))
        await results.wait(for: 500)
        #expect(handlerCalls.current == 1)
        #expect(store.load() == nil)
        #expect(results.results.values.allSatisfy { $0.failure is GrantRevoked })
    }
    /// The store cannot be read at the moment the refreshed token is to be saved (a Redis outage,
    /// a locked device): the server has rotated the refresh token already, so the result is kept
    /// and reported as not saved. Dropping it made the closure load the old token again and send
    /// its spent refresh token a second time, which a server with reuse detection answers by
    /// revoking the whole session.
    @Test func aRefreshedTokenIsKeptWhenTheStoreCannotBeReadAtTheSave() async throws {
        let service = TokenService()
        // Read 1 finds the expired token, read 2 is the refresh's look under the lock, reads 3 to
        // 6 the check before the save, at the first attempt and at each of the three more.
        let store = FlakyReadStore(service.authentication("expired", stale: true), failingReads: [3, 4, 5, 6])
        let events = Protected<[RefreshEvent]>([])
        let closure = Closure(store: store, options: .init(onEvent: { event in events.withLock { $0.append(event) } }))
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshedFrom == ["expired"])
        #expect(store.load()?.accessToken == "expired")
        #expect(events.current.contains { if case .saveFailed = $0 { true } else { false } })
        // The next refresh starts from the kept token, and its result replaces the old one.
        let again = try await closure.reauthorize(signed)
        #expect(again.value(forHTTPHeaderField: "Authorization") == "Bearer token-2")
        #expect(service.refreshedFrom == ["expired", "token-1"])
        #expect(store.load()?.accessToken == "token-2")
    }

    /// The store cannot be read for a moment at the save: the save is tried again, still under
    /// the lock, and lands; nothing is reported.
    @Test func aSaveThatFailsForAMomentIsTriedAgainAndLands() async throws {
        let service = TokenService()
        let store = FlakyReadStore(service.authentication("expired", stale: true), failingReads: [3])
        let events = Protected<[RefreshEvent]>([])
        let closure = Closure(store: store, options: .init(onEvent: { event in events.withLock { $0.append(event) } }))
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(store.load()?.accessToken == "token-1")
        #expect(!events.current.contains { if case .saveFailed = $0 { true } else { false } })
    }

    /// A refresh outlives its lock (the closure abandoned it), and when its answer comes the lock
    /// cannot be taken again (another process holds it): the result is kept and reported as not
    /// saved, as when the store cannot be read, instead of dropped and its spent refresh token
    /// sent once more.
    @Test func aRefreshThatOutlivedItsLockKeepsItsResultWhenTheLockCannotBeTakenAgain() async throws {
        let service = TokenService(behavior: .hold)
        let store = LockingStore(service.authentication("expired", stale: true))
        let events = Protected<[RefreshEvent]>([])
        let adopted = Completions<Void>()
        let closure = Closure(
            store: store,
            options: .init(
                refreshTimeout: 0.1, abandonAfter: 0.3,
                onEvent: { event in
                    events.withLock { $0.append(event) }
                    if case .lateRefreshAdopted = event { adopted.record(0, ()) }
                }))
        let waiting = Task { try await closure.authorize(makeRequest()) }
        await service.started.wait(for: 1)
        // The lock is let go of when the closure abandons the refresh.
        await store.unlocked.wait(for: 1)
        store.refuseLocks()
        service.completePending()
        _ = try? await waiting.value
        await adopted.wait(for: 1)
        #expect(events.current.contains { if case .saveFailed = $0 { true } else { false } })
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        #expect(service.refreshedFrom == ["expired"])
    }

    /// The store's lock is waited for at most half of `abandonAfter`, so that the refresh itself
    /// still has time before the closure gives it up.
    @Test(arguments: [40.0, 3])
    func theStoresLockIsWaitedForAtMostHalfTheAbandonLimit(abandonAfter: Double) async throws {
        let service = TokenService()
        let store = LockingStore(service.authentication("expired", stale: true))
        let closure = Closure(store: store, options: .init(refreshTimeout: 1, abandonAfter: abandonAfter))
        _ = try await closure.authorize(makeRequest())
        let timeout = try #require(store.lockTimeouts.current.first)
        #expect(timeout <= abandonAfter / 2 && timeout > abandonAfter / 2 - 1)
    }

    /// A lock another process holds past the wait is nobody's refusal: however often it happens,
    /// the refresh window is not used up, and each request gets the lock's error.
    @Test func aStoreLockThatCannotBeTakenDoesNotUseUpTheWindow() async throws {
        let service = TokenService()
        let store = LockingStore(service.authentication("expired", stale: true))
        store.refuseLocks()
        let closure = Closure(
            store: store, options: .init(refreshWindow: RefreshWindow(maximumRefreshes: 1, interval: 600)))
        for _ in 1...4 {
            await #expect {
                try await closure.authorize(makeRequest())
            } throws: { error in
                guard case AuthenticationStoreError.lockTimedOut = error else { return false }
                return true
            }
        }
        #expect(store.lockTimeouts.current.count == 4)
    }

    @Test func aFailedSaveIsReportedOnlyAfterTheStoresLockIsReleased() async throws {
        let service = TokenService()
        let store = UnsavableStore(service.authentication("expired", stale: true))
        let heldDuringEvent = Protected<[Bool]>([])
        let closure = Closure(
            store: store,
            options: .init(onEvent: { event in
                if case .saveFailed = event { heldDuringEvent.withLock { $0.append(store.isLocked) } }
            }))
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        // Reported once, and not while other processes would wait on the lock for the handler.
        #expect(heldDuringEvent.current == [false])
    }
}

/// A shared store whose saves all fail, and whose lock tells whether it is held.
final class UnsavableStore: CoordinatedAuthenticationStore, Sendable {
    private struct SaveRefused: Error {}

    private final class Lock: AuthenticationStoreLock, Sendable {
        let held: Protected<Bool>
        init(_ held: Protected<Bool>) { self.held = held }
        func unlock() { held.withLock { $0 = false } }
    }

    private let value: Protected<FakeAuthentication?>
    private let held = Protected(false)

    init(_ value: FakeAuthentication) { self.value = Protected(value) }

    var isLocked: Bool { held.current }
    func load() -> FakeAuthentication? { value.current }
    func save(_ value: FakeAuthentication) throws { throw SaveRefused() }
    func remove() throws { value.withLock { $0 = nil } }
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        held.withLock { $0 = true }
        return Lock(held)
    }
}

/// A store whose refresh lock can be refused from some moment on, as when another process holds
/// it; `unlocked` records each release of a lock it gave.
final class LockingStore: AuthenticationStore, Sendable {
    final class Lock: AuthenticationStoreLock {
        let unlocked: Completions<Void>
        private let released = Protected(false)

        init(unlocked: Completions<Void>) {
            self.unlocked = unlocked
        }

        func unlock() {
            let first = released.withLock { released in
                defer { released = true }
                return !released
            }
            if first { unlocked.record(unlocked.count, ()) }
        }
    }

    let unlocked = Completions<Void>()
    /// The timeout of every lock asked for, in order.
    let lockTimeouts = Protected<[TimeInterval]>([])
    private let state: Protected<(value: FakeAuthentication?, refusing: Bool)>

    init(_ value: FakeAuthentication?) {
        state = Protected((value, false))
    }

    func refuseLocks() {
        state.withLock { $0.refusing = true }
    }

    func load() -> FakeAuthentication? {
        state.withLock { $0.value }
    }

    func save(_ value: FakeAuthentication) throws {
        state.withLock { $0.value = value }
    }

    func remove() throws {
        state.withLock { $0.value = nil }
    }

    func refreshLock(timeout: TimeInterval) throws -> (any AuthenticationStoreLock)? {
        lockTimeouts.withLock { $0.append(timeout) }
        if state.withLock({ $0.refusing }) { throw AuthenticationStoreError.lockTimedOut(after: timeout) }
        return Lock(unlocked: unlocked)
    }
}

/// A store whose reads number `failingReads` (counted from 1) throw, as an outage would.
final class FlakyReadStore: AuthenticationStore, Sendable {
    struct Unavailable: Error {}

    private let state: Protected<(value: FakeAuthentication?, reads: Int)>
    private let failingReads: Set<Int>

    init(_ value: FakeAuthentication?, failingReads: Set<Int>) {
        state = Protected((value, 0))
        self.failingReads = failingReads
    }

    func load() -> FakeAuthentication? {
        state.withLock { $0.value }
    }

    func read() throws -> FakeAuthentication? {
        let (value, read) = state.withLock { state in
            state.reads += 1
            return (state.value, state.reads)
        }
        if failingReads.contains(read) { throw Unavailable() }
        return value
    }

    func save(_ value: FakeAuthentication) throws {
        state.withLock { $0.value = value }
    }

    func remove() throws {
        state.withLock { $0.value = nil }
    }
}

/// A store whose loads return the given values in turn (the last one from then on).
final class ScriptedStore: AuthenticationStore, Sendable {
    private let values: Protected<[FakeAuthentication?]>

    init(_ values: [FakeAuthentication?]) {
        self.values = Protected(values)
    }

    func load() -> FakeAuthentication? {
        values.withLock { values in values.count > 1 ? values.removeFirst() : values.first ?? nil }
    }

    func save(_ value: FakeAuthentication) throws {
        values.withLock { $0 = [value] }
    }

    func remove() throws {
        values.withLock { $0 = [] }
    }
}

@Suite("RefreshingRequestClosure built from a store, after logout and re-login", .timeLimit(.minutes(2)))
struct StoreBackedLogoutTests {
    @Test func aLogoutElsewhereIsNotUndoneByARefresh() async throws {
        let service = TokenService()
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let closure = Closure(store: store)
        let first = try? await closure.authorize(makeRequest())
        #expect(first?.value(forHTTPHeaderField: "Authorization") == "Bearer token-1")
        try store.remove()
        closure.invalidate()
        await #expect {
            try await closure.authorize(makeRequest())
        } throws: { error in
            (error as? RefreshQueueError)?.requiresReauthentication == true
        }
        #expect(store.load() == nil)
    }

    @Test func aRefreshFindingTheStoreEmptyFailsWithNotAuthenticatedAndSavesNothing() async throws {
        let service = TokenService()
        // The first load (find) sees the expired token; by the refresh, another process has
        // logged the user out.
        let store = ScriptedStore([service.authentication("expired", stale: true), nil])
        let closure = Closure(store: store)
        await #expect {
            try await closure.authorize(makeRequest())
        } throws: { error in
            (error as? RefreshQueueError)?.requiresReauthentication == true
        }
        #expect(service.refreshCount == 0)
        #expect(store.load() == nil)
    }

    @Test func afterInvalidGrantTheDeadTokenIsForgottenAndTheHandlerIsNotCalledAgain() async {
        let service = TokenService(behavior: .fail(GrantRevoked()))
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let handlerCalls = Protected(0)
        let closure = Closure(store: store, onReauthenticationRequired: { _ in handlerCalls.withLock { $0 += 1 } })
        for _ in 0..<5 {
            _ = try? await closure.authorize(makeRequest())
        }
        #expect(service.refreshCount == 1)
        #expect(handlerCalls.current == 1)
        #expect(store.load() == nil)
    }

    @Test func aSessionEndedInAnotherProcessCallsTheHandlerOnceHereToo() async throws {
        let service = TokenService(behavior: .fail(GrantRevoked()))
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let calls = (Protected(0), Protected(0))
        // Two closures on one store, as two processes on one token file.
        let first = Closure(store: store, onReauthenticationRequired: { _ in calls.0.withLock { $0 += 1 } })
        let second = Closure(store: store, onReauthenticationRequired: { _ in calls.1.withLock { $0 += 1 } })
        // Both hold the expired token (the second loaded it earlier); the first's refresh is
        // refused and empties the store.
        second.adopt(try #require(store.load()))
        _ = try? await first.authorize(makeRequest())
        var errors: [RefreshQueueError?] = []
        for _ in 0..<5 {
            do {
                _ = try await second.authorize(makeRequest())
                errors.append(nil)
            } catch {
                errors.append(error as? RefreshQueueError)
            }
        }
        #expect(service.refreshCount == 1)
        #expect(calls.0.current == 1)
        #expect(calls.1.current == 1, "the second closure's user must log in again too")
        // The first of them waited for the refresh that found the store empty: it fails like the
        // others, with `notAuthenticated` as it is.
        #expect(errors == Array(repeating: .notAuthenticated, count: 5))
    }

    @Test func aRefusedRefreshAheadAndTheRefreshThatFindsTheStoreEmptyCallTheHandlerOnce() async throws {
        let service = TokenService(behavior: .fail(GrantRevoked()))
        var ageing = service.authentication("ageing")
        ageing.isRefreshRecommended = true
        let store = InMemoryAuthenticationStore(ageing)
        let calls = Protected(0)
        let closure = Closure(store: store, onReauthenticationRequired: { _ in calls.withLock { $0 += 1 } })
        await #expect(throws: (any Error).self) { try await closure.refreshIfNeeded() }
        #expect(calls.current == 1)
        #expect(store.load() == nil)
        // The token still signs requests until it needs a refresh, which finds the store emptied.
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer ageing")
        closure.adopt(service.authentication("ageing", stale: true))
        await #expect {
            try await closure.authorize(makeRequest())
        } throws: { error in
            (error as? RefreshQueueError)?.requiresReauthentication == true
        }
        #expect(service.refreshCount == 1)
        #expect(calls.current == 1)
    }
}

/// A failure that wraps a network error, as `OAuth2Error.transport` does.
struct WrappedOffline: RefreshFailure {
    var isTransportFailure: Bool { true }
}

@Suite("RefreshingRequestClosure and wrapped transport errors", .timeLimit(.minutes(2)))
struct WrappedTransportErrorTests {
    @Test func wrappedTransportFailuresDoNotCountAgainstTheRefreshWindow() async throws {
        let service = TokenService(behavior: .fail(WrappedOffline()))
        service.store(service.authentication("expired", stale: true))
        let closure = Closure.make(service, refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30))
        for _ in 0..<6 {
            _ = try? await closure.authorize(makeRequest())
        }
        service.setBehavior(.succeed)
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-7")
    }
}

@Suite("A refreshed token that cannot be a header value", .timeLimit(.minutes(2)))
struct UnusableRefreshedTokenTests {
    @Test func itIsNotSavedNotAdoptedAndNotReportedAsASuccess() async {
        let service = TokenService(
            behavior: .custom { old in Future(value: old.service.authentication("bad\r\ntoken")) })
        let store = InMemoryAuthenticationStore(service.authentication("expired", stale: true))
        let events = EventLog()
        let closure = Closure(store: store, options: .init(onEvent: events.append))
        let results = Completions<Result<URLRequest, any Error>>()
        closure.authorizeConcurrently(20, into: results)
        await results.wait(for: 20)
        for result in results.results.values {
            #expect(result.refreshQueueError == .invalidToken, "got \(result)")
        }
        #expect(store.load()?.accessToken == "expired")
        #expect(!events.descriptions.contains { $0.hasPrefix("refresh succeeded") })
    }

    @Test func withoutAStoreItIsNotAdoptedEither() async throws {
        try await expectAFailedRefreshThenARecovery(
            failingWith: .custom { old in Future(value: old.service.authentication("bad\ntoken")) }
        ) { error in
            error as? RefreshQueueError == .invalidToken
        }
    }
}
