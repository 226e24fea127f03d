import Foundation
import LocalRedis
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

@testable import RefreshQueueRedis

/// What the store does when Redis is wrong, gone, slow or hostile: typed errors within the
/// deadlines, never a crash, never a password or a token in a message.
@Suite("Redis failures", .timeLimit(.minutes(3)))
struct RedisFailureTests {
    private static func store(port: Int, password: String? = "pw", timeout: TimeInterval = 1, maximum: Int = 1 << 20)
        -> RedisAuthenticationStore<OAuth2Token>
    {
        RedisAuthenticationStore(
            key: "k",
            configuration: RedisConfiguration(
                port: port, password: password, connectTimeout: timeout, commandTimeout: timeout,
                maximumReplySize: maximum))
    }

    /// The defaults the documentation gives: a server on this machine at 6379, database 0, 2 s to
    /// connect and for each command, replies up to 1 MiB, and a refresh lock kept at most 120 s.
    @Test func theDefaultsAreTheDocumentedOnes() {
        let configuration = RedisConfiguration()
        #expect(configuration.host == "127.0.0.1" && configuration.port == 6379 && configuration.database == 0)
        #expect(configuration.username == nil && configuration.password == nil)
        #expect(configuration.connectTimeout == 2 && configuration.commandTimeout == 2)
        #expect(configuration.maximumReplySize == 1 << 20)
        #expect(RedisAuthenticationStore<OAuth2Token>(key: "k").lockTTL == 120)
    }

    /// A server that cannot answer yet is the outage going on (a transport failure, which the
    /// refresh window does not count); a server that refuses is not. `BUSYKEY` is no `BUSY`.
    @Test(
        arguments: [
            ("LOADING Redis is loading the dataset in memory", true), ("BUSY Redis is busy running a script", true),
            ("MASTERDOWN Link with MASTER is down", true), ("ERR max number of clients reached", true),
            ("BUSYKEY Target key name already exists.", false), ("NOPERM this user has no permissions", false),
            ("ERR unknown command 'EVAL'", false), ("WRONGTYPE Operation against a key", false),
            ("NOSCRIPT No matching script", false),
        ])
    func aServerThatCannotAnswerYetIsATransportFailureAndARefusalIsNot(message: String, isTransport: Bool) {
        #expect(RedisError.commandFailed(command: "EVAL", message: message).isTransportFailure == isTransport)
    }

    /// Runs `body`, which must throw a `RedisError`; returns it and how long it took.
    private static func failure(_ body: () throws -> Void) -> (RedisError?, TimeInterval) {
        let start = ProcessInfo.processInfo.systemUptime
        do {
            try body()
            return (nil, ProcessInfo.processInfo.systemUptime - start)
        } catch {
            return (error as? RedisError, ProcessInfo.processInfo.systemUptime - start)
        }
    }

    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aWrongPasswordIsAnAuthenticationFailureThatNeverShowsThePassword() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = Self.store(port: server.port, password: "not-the-password-123", timeout: 10)
        let (error, took) = Self.failure { _ = try store.read() }
        guard case .authenticationFailed(let code) = error else {
            Issue.record("expected authenticationFailed, got \(String(describing: error))")
            return
        }
        #expect(code == "WRONGPASS")
        // At once, not at the 10 s deadline (with room for a loaded machine).
        #expect(took < 5)
        #expect(!String(describing: error).contains("not-the-password-123"))
        #expect(store.load() == nil)
        // No password at all, on a server that requires one.
        let (missing, _) = Self.failure { _ = try Self.store(port: server.port, password: nil).read() }
        #expect(missing == .authenticationFailed("NOAUTH"))
    }

    @Test func aPortNobodyListensOnIsAConnectionFailureAtOnce() throws {
        let unused = try ScriptedRedisServer(reply: nil)
        let port = unused.port
        unused.stop()
        let (error, took) = Self.failure { _ = try Self.store(port: port, timeout: 10).read() }
        guard case .connectionFailed = error else {
            Issue.record("expected connectionFailed, got \(String(describing: error))")
            return
        }
        #expect(took < 5, "not at once, but after \(took) s of a 10 s deadline")
        #expect(error?.isTransportFailure == true)
    }

    @Test func aServerThatNeverAnswersTimesOutByTheDeadline() throws {
        let silent = try ScriptedRedisServer(reply: nil)
        defer { silent.stop() }
        let store = Self.store(port: silent.port, timeout: 0.5)
        let (error, took) = Self.failure { _ = try store.read() }
        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(took >= 0.4 && took < 4, "took \(took) s for a 0.5 s deadline")
        #expect(error?.isTransportFailure == true)
        // Without a password the connection opens at once and the command itself waits.
        let (commandError, commandTook) = Self.failure {
            _ = try Self.store(port: silent.port, password: nil, timeout: 0.5).read()
        }
        #expect(commandError == .timedOut("GET"))
        #expect(commandTook < 4)
    }

    @Test(
        arguments: [
            ("garbage", Array("HTTP/1.1 200 OK\r\n\r\n".utf8)),
            ("a bulk string longer than its length", Array("$3\r\nabcdef\r\n".utf8)),
            ("a length that is not a number", Array("$x\r\n".utf8)),
            ("a bare line feed", Array("+OK\n".utf8)),
        ] as [(String, [UInt8])])
    func aReplyThatIsNotRESPIsAProtocolViolation(_ name: String, _ reply: [UInt8]) throws {
        let hostile = try ScriptedRedisServer(reply: reply)
        defer { hostile.stop() }
        let (error, _) = Self.failure { _ = try Self.store(port: hostile.port, password: nil).read() }
        guard case .protocolViolation = error else {
            Issue.record("\(name): expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    /// A lock whose `SET … NX` never left (the server took the connection but never answered
    /// `AUTH`) has nothing to release: asking opened a second connection and waited out the same
    /// deadlines again, doubling what every refresh's lock step took during an outage.
    @Test func aLockWhoseSetWasNeverSentIsNotReleasedOverAnotherConnection() throws {
        let silent = try ScriptedRedisServer(reply: nil)
        defer { silent.stop() }
        let store = Self.store(port: silent.port, timeout: 0.3)
        let (error, _) = Self.failure { _ = try store.lock(timeout: 0) }
        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(silent.waitForRequests(1))
        #expect(!silent.waitForRequests(2, timeout: 0.5), "a second connection was opened")
    }

    @Test func aReplyCutShortIsAClosedConnection() throws {
        let hostile = try ScriptedRedisServer(reply: Array("$100\r\nonly a part".utf8))
        defer { hostile.stop() }
        let (error, took) = Self.failure { _ = try Self.store(port: hostile.port, password: nil, timeout: 10).read() }
        #expect(error == .connectionClosed)
        #expect(took < 5, "not at once, but after \(took) s of a 10 s deadline")
    }

    @Test func aReplyLargerThanTheBoundIsRefusedBeforeItIsRead() throws {
        let hostile = try ScriptedRedisServer(reply: Array("$999999999\r\n".utf8) + [UInt8](repeating: 65, count: 2048))
        defer { hostile.stop() }
        let (error, _) = Self.failure { _ = try Self.store(port: hostile.port, password: nil, maximum: 1024).read() }
        #expect(error == .replyTooLarge(limit: 1024))
        let endless = try ScriptedRedisServer(reply: Array("+".utf8) + [UInt8](repeating: 65, count: 4096))
        defer { endless.stop() }
        let (lineError, _) = Self.failure {
            _ = try Self.store(port: endless.port, password: nil, maximum: 1024).read()
        }
        #expect(lineError == .replyTooLarge(limit: 1024))
    }

    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aValueLargerThanTheBoundIsNotSaved() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(),
            configuration: RedisConfiguration(port: server.port, password: server.password, maximumReplySize: 256))
        let huge = OAuth2Token(accessToken: String(repeating: "a", count: 1_000), refreshToken: "r")
        let (error, _) = Self.failure { try store.save(huge) }
        #expect(error == .replyTooLarge(limit: 256))
        #expect(try store.read() == nil)
    }

    /// Whatever `save` accepts reads back: the bound is on the reply, which frames the value with
    /// a few bytes (`$`, its length, two line ends), so a value just under the bound is refused
    /// when saved rather than stored and then unreadable (read back as logged out).
    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func everyValueThatIsSavedReadsBackUpToTheBound() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(),
            configuration: RedisConfiguration(port: server.port, password: server.password, maximumReplySize: 256))
        var saved = 0
        var refused = 0
        for length in 100...260 {
            let token = OAuth2Token(accessToken: String(repeating: "a", count: length), refreshToken: "r")
            do {
                try store.save(token)
            } catch {
                #expect(error as? RedisError == .replyTooLarge(limit: 256))
                refused += 1
                continue
            }
            saved += 1
            #expect(try store.read()?.accessToken == token.accessToken, "a saved value of \(length) bytes")
        }
        #expect(saved > 0)
        #expect(refused > 0)
    }

    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aValueThatDoesNotDecodeReadsAsNoAuthentication() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: RedisFixture.uniqueKey(), configuration: RedisFixture.configuration(server))
        _ = try RedisClient(store.configuration).run(RESPCommand("SET", [store.key, "{not json"]))
        #expect(try store.read() == nil)
        try store.save(OAuth2Token(accessToken: "a", refreshToken: "r"))
        #expect(try store.read()?.accessToken == "a")
    }

    @Test func aServerErrorThatEchoesArgumentsIsCutBeforeThem() {
        let message = "ERR unknown command 'SET', with args beginning with: 'k' '{\"accessToken\":\"secret\"}'"
        #expect(RedisConnection.safe(message) == "ERR unknown command 'SET'")
    }
}
