import Foundation
import LocalRedis
import RefreshQueue
import Testing

@testable import RefreshQueueRedis

/// The store against a real server: values, the lock, and its expiry.
@Suite("RedisAuthenticationStore", .enabled(if: RedisFixture.enabled, RedisFixture.skipReason), .timeLimit(.minutes(2)))
struct RedisStoreTests {
    @Test func aSavedValueLoadsBackAndRemovingLeavesNothing() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server))
        #expect(try store.read() == nil)
        let token = OAuth2Token(accessToken: "access", refreshToken: "refresh", expiresIn: 3600)
        try store.save(token)
        #expect(try store.read() == token)
        #expect(store.load() == token)
        try store.remove()
        #expect(try store.read() == nil)
        try store.remove()
    }

    @Test func theLockIsExclusiveReleasedOnceAndTimesOut() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let configuration = RedisFixture.configuration(server)
        let key = RedisFixture.uniqueKey()
        let first = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration)
        let second = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration)
        let held = try first.lock(timeout: 1)
        #expect(try first.lockHolder() == ProcessInfo.processInfo.processIdentifier)
        let start = ProcessInfo.processInfo.systemUptime
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0.3)) { try second.lock(timeout: 0.3) }
        #expect(ProcessInfo.processInfo.systemUptime - start >= 0.3)
        held.unlock()
        let next = try second.lock(timeout: 1)
        // A second unlock of the first lock must not release the lock the second store holds now.
        held.unlock()
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try first.lock(timeout: 0) }
        next.unlock()
        _ = try first.lock(timeout: 0)
    }

    /// A holder slower than its lock's TTL: the lock expired and another took it. Its late
    /// release must leave the other's lock in place (it deletes only its own value).
    @Test func aLateReleaseOfAnExpiredLockLeavesTheNextHoldersLock() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let configuration = RedisFixture.configuration(server)
        let key = RedisFixture.uniqueKey()
        let slow = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration, lockTTL: 0.3)
        let next = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration)
        let expired = try slow.lock(timeout: 0)
        let taken = try next.lock(timeout: 5)
        expired.unlock()
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try slow.lock(timeout: 0) }
        taken.unlock()
        try slow.lock(timeout: 0).unlock()
    }

    @Test func aLockNobodyReleasesExpiresAtItsTTL() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let configuration = RedisFixture.configuration(server)
        let key = RedisFixture.uniqueKey()
        let dying = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration, lockTTL: 0.5)
        let survivor = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration, lockTTL: 0.5)
        // Taken with a raw SET, as a process killed while holding it leaves it: never released.
        _ = try dying.lockRawForTesting()
        let start = ProcessInfo.processInfo.systemUptime
        let lock = try survivor.lock(timeout: 5)
        let waited = ProcessInfo.processInfo.systemUptime - start
        #expect(waited >= 0.3 && waited < 3, "waited \(waited) s for a 0.5 s lock")
        lock.unlock()
    }

    @Test func anInfiniteTimeoutWaitsForTheLockAsTheFileStoreDoes() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let configuration = RedisFixture.configuration(server)
        let key = RedisFixture.uniqueKey()
        let first = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration)
        let second = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: configuration)
        let held = try first.lock(timeout: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { held.unlock() }
        let start = ProcessInfo.processInfo.systemUptime
        let lock = try second.lock(timeout: .infinity)
        #expect(ProcessInfo.processInfo.systemUptime - start >= 0.2)
        lock.unlock()
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) {
            let again = try first.lock(timeout: 0)
            defer { again.unlock() }
            try second.lock(timeout: .nan).unlock()
        }
    }

    @Test(arguments: [1e17, Double.greatestFiniteMagnitude])
    func aHugeLockTTLIsReadAsAYearInsteadOfCrashingTheLock(ttl: Double) throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server), lockTTL: ttl)
        #expect(store.lockTTL == 365 * 86_400)
        let lock = try store.lock(timeout: 0)
        let client = RedisClient(RedisFixture.configuration(server))
        guard case .integer(let milliseconds) = try client.run(RESPCommand("PTTL", [store.lockKey])) else {
            Issue.record("the lock has no expiry")
            return
        }
        #expect(milliseconds > 364 * 86_400_000 && milliseconds <= 365 * 86_400_000)
        lock.unlock()
    }

    @Test func anACLUserAndADatabaseAreUsedAsConfigured() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let admin = RedisClient(RedisFixture.configuration(server))
        _ = try admin.run(RESPCommand("ACL", ["SETUSER", "app", "on", ">app-password", "~*", "+@all"]))
        let key = RedisFixture.uniqueKey()
        let token = OAuth2Token(accessToken: "in-database-3", refreshToken: "r")
        let asApp = RedisAuthenticationStore<OAuth2Token>(
            key: key,
            configuration: RedisConfiguration(port: server.port, username: "app", password: "app-password", database: 3)
        )
        try asApp.save(token)
        #expect(try asApp.read() == token)
        // Database 0 does not have it; database 3 does.
        #expect(try admin.run(RESPCommand("GET", [key])) == .null)
        let inThree = RedisAuthenticationStore<OAuth2Token>(
            key: key, configuration: RedisConfiguration(port: server.port, password: server.password, database: 3))
        #expect(try inThree.read() == token)
        // The user's password, not the default one.
        let wrong = RedisAuthenticationStore<OAuth2Token>(
            key: key, configuration: RedisConfiguration(port: server.port, username: "app", password: server.password))
        #expect(throws: RedisError.authenticationFailed("WRONGPASS")) { try wrong.read() }
        // A database the server does not have.
        let missing = RedisAuthenticationStore<OAuth2Token>(
            key: key, configuration: RedisConfiguration(port: server.port, password: server.password, database: 99))
        #expect(throws: RedisError.self) { try missing.read() }
    }

    @Test func theDescriptionNeverShowsThePassword() throws {
        let configuration = RedisConfiguration(port: 6390, username: "app", password: "hunter2-secret")
        let store = RedisAuthenticationStore<OAuth2Token>(key: "k", configuration: configuration)
        for text in [String(describing: store), String(describing: configuration), String(reflecting: configuration)] {
            #expect(!text.contains("hunter2"))
        }
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("hunter2"))
    }

    /// `dump` walks into stored properties: after a value went through the connection, the store
    /// shows neither the password nor the value's tokens.
    @Test func dumpShowsNeitherThePasswordNorTheValue() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server))
        try store.save(OAuth2Token(accessToken: "dumped-access", refreshToken: "dumped-refresh", expiresIn: 3600))
        #expect(try store.read()?.accessToken == "dumped-access")
        var dumped = ""
        dump(store, to: &dumped)
        #expect(dumped.contains("RedisAuthenticationStore"))
        #expect(!dumped.contains("connection"), "the connection's buffer may hold a reply")
        #expect(!dumped.contains("dumped-"), "\(dumped)")
        #expect(!dumped.contains(server.password), "\(dumped)")
    }
}

extension RedisAuthenticationStore {
    /// Takes the lock as a holder that will never release it.
    func lockRawForTesting() throws -> RESPValue {
        try RedisClient(configuration).run(
            RESPCommand("SET", [lockKey, "999999-dead", "NX", "PX", String(Int64(lockTTL * 1000))]))
    }
}
