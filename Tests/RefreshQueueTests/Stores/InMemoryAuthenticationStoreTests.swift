import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

@Suite("InMemoryAuthenticationStore", .timeLimit(.minutes(2)))
struct InMemoryAuthenticationStoreTests {
    @Test func aNewStoreIsEmptyOrHoldsTheGivenValue() {
        #expect(InMemoryAuthenticationStore<StoredCredentials>().load() == nil)
        #expect(InMemoryAuthenticationStore(StoredCredentials.sample(1)).load() == .sample(1))
    }

    @Test func saveReplacesTheValueAndRemoveForgetsIt() throws {
        let store = InMemoryAuthenticationStore(StoredCredentials.sample(1))

        try store.save(.sample(2))
        #expect(store.load() == .sample(2))

        try store.remove()
        #expect(store.load() == nil)
        try store.remove()
        #expect(store.load() == nil)
    }

    @Test func bothStoresBehaveAlikeThroughTheProtocol() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        try expectStoreSemantics(InMemoryAuthenticationStore<StoredCredentials>())
        try expectStoreSemantics(FileAuthenticationStore<StoredCredentials>(fileURL: directory.file("auth.json")))
    }

    private func expectStoreSemantics<S: AuthenticationStore>(_ store: S) throws where S.Value == StoredCredentials {
        #expect(store.load() == nil)
        try store.remove()
        try store.save(.sample(1))
        try store.save(.sample(2))
        #expect(store.load() == .sample(2))
        try store.remove()
        #expect(store.load() == nil)
    }

    @Test func concurrentSavesAndLoadsAlwaysSeeAWholeSavedValue() throws {
        let store = InMemoryAuthenticationStore(StoredCredentials.sample(-1))
        let written = Set((-1..<800).map { StoredCredentials.sample($0).accessToken })
        let failures = Protected(0)

        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<100 {
                if step.isMultiple(of: 2) {
                    do { try store.save(.sample(worker * 100 + step)) } catch { failures.withLock { $0 += 1 } }
                } else if let loaded = store.load(), written.contains(loaded.accessToken) {
                    continue
                } else {
                    failures.withLock { $0 += 1 }
                }
            }
        }

        #expect(failures.current == 0)
    }

    @Test func aReplacedValueIsReleasedOutsideTheStoresLock() throws {
        // The value's deinit reads the store: released under the store's lock, it would deadlock.
        let box = Protected<InMemoryAuthenticationStore<Reentrant>?>(nil)
        let reads = Protected(0)
        let release: @Sendable () -> Void = {
            _ = box.current?.load()
            reads.withLock { $0 += 1 }
        }
        let store = InMemoryAuthenticationStore(Reentrant(onRelease: release))
        box.withLock { $0 = store }

        try store.save(Reentrant(onRelease: release))
        try store.remove()

        #expect(reads.current == 2)
        box.withLock { $0 = nil }
    }

    private final class Reentrant: Sendable {
        let onRelease: @Sendable () -> Void

        init(onRelease: @escaping @Sendable () -> Void) {
            self.onRelease = onRelease
        }

        deinit {
            onRelease()
        }
    }
}
