import Foundation
import LocalRedis
import Testing

@testable import RefreshQueue
@testable import RefreshQueueRedis

/// A Redis store writes at a revision only while the key still holds it: a refresh's save that
/// lost the race to a logout or a login by another instance changes nothing.
@Suite("Redis store revisions", .enabled(if: RedisFixture.enabled, RedisFixture.skipReason), .timeLimit(.minutes(2)))
struct RedisRevisionTests {
    @Test func writesAtARevisionLandOnlyWhileTheKeyStillHoldsIt() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let configuration = RedisFixture.configuration(server)
        let key = RedisFixture.uniqueKey()
        let store = RedisAuthenticationStore<String>(key: key, configuration: configuration)
        // Another instance of the service, on its own connection.
        let other = RedisAuthenticationStore<String>(key: key, configuration: configuration)

        let empty = try store.readRevision()
        #expect(empty.value == nil)
        try other.save("user-a")
        #expect(try !store.save("x", ifStill: empty.revision), "the key was empty when read; now it is not")
        #expect(try !store.remove(ifStill: empty.revision))

        let read = try store.readRevision()
        #expect(read.value == "user-a")
        // A logout by the other instance between the reading and the write wins.
        try other.remove()
        #expect(try !store.save("refreshed", ifStill: read.revision))
        #expect(try other.read() == nil, "the logout was undone")
        // A login as someone else wins too, over a save and over a removal.
        try other.save("user-b")
        #expect(try !store.save("refreshed", ifStill: read.revision))
        #expect(try !store.remove(ifStill: read.revision))
        #expect(try other.read() == "user-b")

        // Unchanged since the reading: the write lands, and moves the revision on.
        let current = try store.readRevision()
        #expect(try store.save("refreshed", ifStill: current.revision))
        #expect(try other.read() == "refreshed")
        #expect(try !store.save("again", ifStill: current.revision))
        #expect(try store.remove(ifStill: try store.readRevision().revision))
        #expect(try other.read() == nil)
        #expect(try store.save("new", ifStill: try store.readRevision().revision), "nothing stored is a revision too")
        #expect(try other.read() == "new")
    }

    @Test func aRefreshThroughARedisStoreComparesAsItWrites() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<String>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server))
        try store.save("a")
        let writes = ComparedStoreWrites(store)
        let read = try writes.read()
        #expect(read.value == "a")
        #expect(read.revision != nil, "a Redis store is written at a revision, not checked and then written")
        try store.remove()
        #expect(try !writes.save("b", read.revision))
        #expect(try store.read() == nil)
    }
}
