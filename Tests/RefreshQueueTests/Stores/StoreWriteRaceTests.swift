import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A logout or a login that lands between a refresh's "does the store still hold what I
/// refreshed?" and its write wins: the refresh's write is decided and done as one step.
///
/// The moment is made exact by the refresh's own reading: `decode` (called each time the refresh
/// reads the store) runs the other writer's action on its second call, the reading that decides
/// the save (or the removal), after the bytes were read and before anything is written.
@Suite("Store writes decided on one reading", .timeLimit(.minutes(1)))
struct StoreWriteRaceTests {
    /// An invalid_grant-like failure: only a new login helps.
    struct Refused: RefreshFailure {
        var requiresReauthentication: Bool { true }
    }

    /// Refreshes the stored token "stale" through `store` (with `other`, another object on the
    /// same store, standing in for another process), running `meanwhile` on `other` at the
    /// reading that decides the write; returns what `other` reads afterwards and the refresh's
    /// result.
    private static func refresh<Store: AuthenticationStore>(
        through store: Store, other: Store, behavior: TokenService.Behavior = .succeed,
        atReadings readingsChanged: ClosedRange<Int> = 2...2,
        meanwhile: @escaping @Sendable (Store) throws -> Void
    ) async throws -> (stored: String?, result: Result<FakeAuthentication, any Error>) where Store.Value == String {
        try store.save("stale")
        let service = TokenService(behavior: behavior)
        let readings = Protected(0)
        let refresh = StoreBackedRefresh<FakeAuthentication>(
            store: store,
            decode: { token in
                let reading = readings.withLock { count in
                    count += 1
                    return count
                }
                if readingsChanged.contains(reading) { try? meanwhile(other) }
                return service.authentication(token, stale: token == "stale")
            },
            encode: { $0.accessToken }, scheme: .bearer, onReauthenticationRequired: nil, onEvent: nil)
        let result = await withCheckedContinuation { continuation in
            refresh.refresh(service.authentication("stale", stale: true), within: RefreshBudget(abandonAfter: 20))
                .observe { continuation.resume(returning: $0) }
        }
        #expect(readings.current >= 2, "the refresh read the store again before its write")
        return (other.load(), result)
    }

    private static func isSuperseded(_ result: Result<FakeAuthentication, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return error is RefreshSuperseded
    }

    private typealias Stores = (FileAuthenticationStore<String>, FileAuthenticationStore<String>, StoreTestDirectory)

    /// Two store objects on one file (one for the refresh, one for "another process"), in a
    /// directory of their own.
    private static func fileStores() throws -> Stores {
        let directory = try StoreTestDirectory()
        let url = directory.file("token.json")
        return (
            try FileAuthenticationStore<String>(fileURL: url), try FileAuthenticationStore<String>(fileURL: url),
            directory
        )
    }

    @Test func aLogoutInAnotherProcessAtTheMomentOfTheSaveIsNotUndone() async throws {
        let (store, other, directory) = try Self.fileStores()
        defer { directory.remove() }
        let (stored, result) = try await Self.refresh(through: store, other: other) { try $0.remove() }
        #expect(stored == nil, "the logout was undone")
        #expect(Self.isSuperseded(result), "the refreshed token is not used either")
    }

    @Test func aLoginInAnotherProcessAtTheMomentOfTheSaveIsNotOverwritten() async throws {
        let (store, other, directory) = try Self.fileStores()
        defer { directory.remove() }
        let (stored, result) = try await Self.refresh(through: store, other: other) { try $0.save("user-b") }
        #expect(stored == "user-b", "another user's login was overwritten")
        #expect(Self.isSuperseded(result))
    }

    @Test func aLoginAtTheMomentARefusedSessionIsRemovedStays() async throws {
        let (store, other, directory) = try Self.fileStores()
        defer { directory.remove() }
        let (stored, _) = try await Self.refresh(through: store, other: other, behavior: .fail(Refused())) {
            try $0.save("user-b")
        }
        #expect(stored == "user-b", "the new login was removed with the refused session")
    }

    @Test func aRefusedSessionIsStillRemovedWhenNothingHappensMeanwhile() async throws {
        let (store, other, directory) = try Self.fileStores()
        defer { directory.remove() }
        let (stored, _) = try await Self.refresh(through: store, other: other, behavior: .fail(Refused())) { _ in }
        #expect(stored == nil)
    }

    @Test func aLogoutOnAnotherThreadAtTheMomentOfAnInMemorySaveIsNotUndone() async throws {
        let store = InMemoryAuthenticationStore<String>()
        let (stored, result) = try await Self.refresh(through: store, other: store) { try $0.remove() }
        #expect(stored == nil, "the logout was undone")
        #expect(Self.isSuperseded(result))
    }

    @Test func aLoginAtTheMomentAnInMemoryRefusedSessionIsRemovedStays() async throws {
        let store = InMemoryAuthenticationStore<String>()
        let (stored, _) = try await Self.refresh(through: store, other: store, behavior: .fail(Refused())) {
            try $0.save("user-b")
        }
        #expect(stored == "user-b")
    }

    @Test func aRefreshedTokenIsUsedWhenTheStoreKeepsChangingUnderEverySave() async throws {
        // Something keeps writing the very session that was refreshed: no save lands, but the
        // new token (whose refresh token may be the only one the server still accepts) is used.
        let store = InMemoryAuthenticationStore<String>()
        let (stored, result) = try await Self.refresh(through: store, other: store, atReadings: 2...100) {
            try $0.save("stale")
        }
        #expect(stored == "stale")
        #expect((try? result.get())?.accessToken == "token-1", "the refreshed token was dropped")
    }

    @Test func theRefreshedTokenIsSavedWhenNothingHappensMeanwhile() async throws {
        let (store, other, directory) = try Self.fileStores()
        defer { directory.remove() }
        let (stored, result) = try await Self.refresh(through: store, other: other) { _ in }
        #expect(stored == "token-1")
        #expect((try? result.get())?.accessToken == "token-1")
    }
}

/// The revisions the built-in stores compare: a write at a stale revision changes nothing.
@Suite("Store revisions")
struct StoreRevisionTests {
    @Test func aFileStoreWritesOnlyAtTheRevisionItWasRead() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("token.json"))
        let empty = try store.readRevision()
        #expect(empty.value == nil)
        try store.save("a")
        #expect(try !store.save("b", ifStill: empty.revision))
        #expect(try !store.remove(ifStill: empty.revision))
        #expect(store.load() == "a")
        let current = try store.readRevision()
        #expect(current.value == "a")
        #expect(try store.save("b", ifStill: current.revision))
        #expect(try !store.save("c", ifStill: current.revision), "the revision moved with the save")
        let saved = try store.readRevision()
        #expect(try store.remove(ifStill: saved.revision))
        #expect(store.load() == nil)
        // Nothing stored is a revision too.
        #expect(try store.save("d", ifStill: try store.readRevision().revision))
        #expect(store.load() == "d")
    }

    @Test func anInMemoryStoreWritesOnlyAtTheRevisionItWasRead() throws {
        let store = InMemoryAuthenticationStore<String>("a")
        let read = try store.readRevision()
        #expect(read.value == "a")
        // The same value saved again is still a write since the reading.
        try store.save("a")
        #expect(try !store.save("b", ifStill: read.revision))
        #expect(try !store.remove(ifStill: read.revision))
        #expect(store.load() == "a")
        let current = try store.readRevision()
        #expect(try store.remove(ifStill: current.revision))
        #expect(store.load() == nil)
    }

    @Test func aFileStoreRemovesNothingAtARevisionWhenItsDirectoryIsGone() throws {
        let directory = try StoreTestDirectory()
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("sub/token.json"))
        try store.save("a")
        let read = try store.readRevision()
        directory.remove()
        #expect(try !store.remove(ifStill: read.revision))
        try store.remove()
        #expect(store.load() == nil)
    }
}
