import Foundation
import LocalRedis
import RefreshQueue
import Testing

@testable import RefreshQueueRedis

/// The Redis tests' server: one `redis-server` per test, on a free loopback port.
///
/// Without a `redis-server` on this machine the tests are skipped with a message saying so,
/// unless `REQUIRE_REDIS=1` (what `.ci/run` sets): then they run and fail at their start.
enum RedisFixture {
    static let isRequired = ProcessInfo.processInfo.environment["REQUIRE_REDIS"] == "1"

    /// Whether the tests run: a server binary exists, or the run requires one.
    static let enabled = isRequired || LocalRedis.findExecutable() != nil

    static let skipReason: Comment =
        "redis-server is not installed (apt-get install redis-server, or set REDIS_SERVER); skipped"

    /// A started server. Released, it stops: keep it alive to the end of the test
    /// (`defer { server.stop() }`), since a value's life may end at its last use.
    static func server() throws -> LocalRedis {
        do {
            return try LocalRedis()
        } catch {
            Issue.record("could not start redis-server: \(error)")
            throw error
        }
    }

    /// Where `server` is, with its password.
    static func configuration(
        _ server: LocalRedis, password: String? = nil, commandTimeout: TimeInterval = 2
    ) -> RedisConfiguration {
        RedisConfiguration(
            host: "127.0.0.1", port: server.port, password: password ?? server.password, commandTimeout: commandTimeout)
    }

    /// A key no other test uses.
    static func uniqueKey(_ name: String = #function) -> String {
        "refreshqueue-test:\(name.prefix { $0 != "(" }):\(UUID().uuidString)"
    }
}
