import Foundation
import RefreshQueue
import RefreshQueueRedis
import Testing

/// A Redis configuration no server could use stops the program where it is given, naming the
/// option; the limits themselves are accepted. No server is needed.
@Suite("Redis configuration checks", .timeLimit(.minutes(2)))
struct RedisConfigurationCheckTests {
    private static func text(_ result: ExitTest.Result?) -> String {
        result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
    }

    @Test func aPortOfZeroOrPastTheLastStopsTheProgram() async {
        let zero = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisConfiguration(port: 0)
        }
        #expect(Self.text(zero).contains("RefreshQueue: RedisConfiguration.port must be within 1...65535, not 0"))
        await #expect(processExitsWith: .failure) {
            var configuration = RedisConfiguration()
            configuration.port = 65_536
        }
    }

    @Test func aNegativeDatabaseStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisConfiguration(database: -1)
        }
        #expect(Self.text(result).contains("RedisConfiguration.database must be 0 or more"))
    }

    @Test func aTimeoutOfZeroStopsTheProgramWhenGivenOrSetLater() async {
        let connect = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisConfiguration(connectTimeout: 0)
        }
        #expect(Self.text(connect).contains("RedisConfiguration.connectTimeout must be"))
        let command = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var configuration = RedisConfiguration()
            configuration.commandTimeout = .nan
        }
        #expect(Self.text(command).contains("RedisConfiguration.commandTimeout must be"))
    }

    @Test func aReplyBoundUnderSixtyFourBytesStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisConfiguration(maximumReplySize: 63)
        }
        #expect(Self.text(result).contains("RedisConfiguration.maximumReplySize must be 64 or more, not 63"))
    }

    @Test func aLockTTLUnderAMillisecondStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisAuthenticationStore<String>(key: "k", lockTTL: 0.0009)
        }
        #expect(Self.text(result).contains("RedisAuthenticationStore.lockTTL must be"))
        await #expect(processExitsWith: .failure) {
            _ = RedisAuthenticationStore<String>(key: "k", lockTTL: .infinity)
        }
    }

    @Test func theLimitsThemselvesAreAccepted() {
        var configuration = RedisConfiguration(
            port: 1, database: 0, connectTimeout: .leastNonzeroMagnitude, commandTimeout: 0.001, maximumReplySize: 64)
        configuration.port = 65_535
        #expect(configuration.port == 65_535 && configuration.database == 0 && configuration.maximumReplySize == 64)
        let store = RedisAuthenticationStore<String>(key: "k", configuration: configuration, lockTTL: 0.001)
        #expect(store.lockTTL == 0.001)
    }
}
