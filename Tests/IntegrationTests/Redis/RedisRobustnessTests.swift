import Foundation
import LocalRedis
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

@testable import RefreshQueueRedis

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store when things go wrong halfway: a lock whose answer is lost, many callers on a server
/// that stopped answering, a server that is still loading its data, a hostile length with no
/// bound, and processes the service starts.
@Suite("Redis robustness", .timeLimit(.minutes(3)))
struct RedisRobustnessTests {
    /// The lock's `SET … NX` reached the server and took the lock, but its answer never came back:
    /// the caller fails (a transport failure), and must not leave behind a lock nobody can release,
    /// which would block every process for `lockTTL` (120 s by default).
    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aLockWhoseAnswerIsLostIsNotLeftHeldForItsTTL() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let proxy = try ReplySwallowingProxy(to: server.port, swallowingRepliesAfter: "$2\r\nNX\r\n")
        defer { proxy.stop() }
        let key = RedisFixture.uniqueKey()
        let behindProxy = Self.store(key, behind: proxy, of: server)
        #expect(throws: RedisError.timedOut("SET")) { _ = try behindProxy.lock(timeout: 5) }
        #expect(proxy.swallowedByteCount > 0, "the server took the lock and its answer was lost")
        // Another instance finds the lock free, not held by an owner nobody knows.
        Self.expectLockFree(key, on: server)
    }

    /// The connection drops as the release script is sent, before the server runs it: the lock is
    /// released all the same (the script runs once more, on a new connection), not left to block
    /// every process until its TTL.
    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aLockWhoseReleaseIsLostOnTheWayIsReleasedAllTheSame() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let proxy = try ReplySwallowingProxy(
            to: server.port, swallowingRepliesAfter: "$4\r\nEVAL\r\n", droppingTheCommand: true)
        defer { proxy.stop() }
        let key = RedisFixture.uniqueKey()
        let behindProxy = Self.store(key, behind: proxy, of: server)
        try behindProxy.lock(timeout: 5).unlock()
        #expect(proxy.swallowedByteCount > 0, "the release was lost on its way")
        Self.expectLockFree(key, on: server)
    }

    /// A store of `key` that talks to `server` through `proxy`, with a 1 s command deadline and a
    /// lock that lives 120 s.
    private static func store(_ key: String, behind proxy: ReplySwallowingProxy, of server: LocalRedis)
        -> RedisAuthenticationStore<OAuth2Token>
    {
        RedisAuthenticationStore<OAuth2Token>(
            key: key,
            configuration: RedisConfiguration(
                port: proxy.port, password: server.password, connectTimeout: 5, commandTimeout: 1),
            lockTTL: 120)
    }

    /// Another instance, talking to `server` directly, takes the lock of `key` at once: nobody is
    /// left holding it.
    private static func expectLockFree(_ key: String, on server: LocalRedis) {
        let other = RedisAuthenticationStore<OAuth2Token>(key: key, configuration: RedisFixture.configuration(server))
        do {
            try other.lock(timeout: 0).unlock()
        } catch {
            Issue.record("the lock was left held: \(error)")
        }
    }

    /// "Every method blocks the calling thread for at most the configuration's deadlines": also
    /// when several threads call at once and the server has stopped answering. Calls took turns,
    /// each waiting for the deadlines of every call ahead of it too.
    @Test func callsFromManyThreadsAtOnceEachEndWithinTheDeadlines() throws {
        let silent = try ScriptedRedisServer(reply: nil)
        defer { silent.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "k",
            configuration: RedisConfiguration(
                port: silent.port, password: "pw", connectTimeout: 0.5, commandTimeout: 0.5))
        let callers = 8
        let durations = Protected<[TimeInterval]>([])
        let errors = Protected<[RedisError?]>([])
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<callers {
            Thread.detachNewThread {
                let start = ProcessInfo.processInfo.systemUptime
                var failure: RedisError?
                do { _ = try store.read() } catch { failure = error as? RedisError }
                let took = ProcessInfo.processInfo.systemUptime - start
                durations.withLock { $0.append(took) }
                errors.withLock { $0.append(failure) }
                done.signal()
            }
        }
        for _ in 0..<callers { done.wait() }
        // 0.5 s to connect and 0.5 s for the command: 1 s each, with room for a loaded machine.
        let longest = durations.current.max() ?? 0
        #expect(longest < 2.5, "a call took \(longest) s; each may take 1 s (\(durations.current.sorted()))")
        #expect(errors.current.allSatisfy { $0?.isTransportFailure == true }, "\(errors.current)")
    }

    /// A server that keeps sending, a few bytes at a time, a reply that is never complete: the
    /// command still ends at its deadline. The deadline was looked at only when nothing had
    /// arrived, and each arrival parsed the whole reply again from its start: as long as bytes
    /// came in faster than a parse took, the call ran on past its deadline, for as long as the
    /// server liked.
    @Test func aReplyDrippedFasterThanItIsParsedStillEndsAtTheDeadline() throws {
        let elements = 340_000
        let burst = 260_000
        let hostile = try DrippingRedisServer(
            burst: Array("*\(elements)\r\n".utf8) + Array(repeating: Array("+\r\n".utf8), count: burst).flatMap { $0 },
            drip: Array(repeating: Array("+\r\n".utf8), count: elements - burst).flatMap { $0 },
            chunk: 3, pause: 0.0002, duration: 20)
        defer { hostile.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "k", configuration: RedisConfiguration(port: hostile.port, connectTimeout: 1, commandTimeout: 1))
        let start = ProcessInfo.processInfo.systemUptime
        var failure: RedisError?
        do { _ = try store.read() } catch { failure = error as? RedisError }
        let took = ProcessInfo.processInfo.systemUptime - start
        #expect(failure == .timedOut("GET"), "\(String(describing: failure))")
        #expect(took < 5, "took \(took) s for a 1 s deadline")
    }

    /// "The ACL user name": a user without a password (`nopass`) is still that user. With a
    /// username and no password the username was dropped and the store spoke as `default`: here
    /// refused (`default` is off), elsewhere with `default`'s keys and rights instead of the user's.
    @Test(.enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aUsernameWithoutAPasswordIsStillUsed() throws {
        let server = try RedisFixture.server()
        defer { server.stop() }
        let admin = RedisClient(RedisFixture.configuration(server))
        // Each step says its name when it fails: the error alone does not say which call it was.
        try Self.step(on: server, "ACL SETUSER app") {
            _ = try admin.run(RESPCommand("ACL", ["SETUSER", "app", "on", "nopass", "~app:*", "+@all"]))
        }
        try Self.step(on: server, "ACL SETUSER default off") {
            _ = try admin.run(RESPCommand("ACL", ["SETUSER", "default", "off"]))
        }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "app:token", configuration: RedisConfiguration(port: server.port, username: "app"))
        let token = OAuth2Token(accessToken: "as-app", refreshToken: "r")
        try Self.step(on: server, "save as app") { try store.save(token) }
        #expect(try Self.step(on: server, "read as app") { try store.read() } == token)
        try Self.step(on: server, "lock as app") { try store.lock(timeout: 0).unlock() }
    }

    /// Runs `body`; when it throws, records which step it was, and whether `server` still runs,
    /// before passing the error on.
    private static func step<T>(on server: LocalRedis, _ name: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let runs = server.processIdentifier.map { kill($0, 0) == 0 } ?? false
            Issue.record("\(name) failed: \(error) (redis-server \(runs ? "still runs" : "is gone"))")
            throw error
        }
    }

    /// A restarted server answers `-LOADING` until it has read its data back: that is the outage
    /// still going on, not a refusal, and must not count against the refresh window. It did: with
    /// one refresh allowed per window, the second request failed with `excessiveRefresh`, and
    /// every request would until the window had passed, long after Redis was back.
    @Test func aServerStillLoadingItsDataIsATransportFailure() async throws {
        let loading = try ScriptedRedisServer(
            reply: Array("-LOADING Redis is loading the dataset in memory\r\n".utf8))
        defer { loading.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "k", configuration: RedisConfiguration(port: loading.port, connectTimeout: 5, commandTimeout: 5))
        #expect(throws: RedisError.self) { _ = try store.lock(timeout: 0) }
        do {
            _ = try store.read()
        } catch let error as RedisError {
            #expect(error.isTransportFailure, "\(error)")
        }

        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = StubHarness.exampleClient(stub)
        let expired = OAuth2Token(
            accessToken: "expired-access", refreshToken: "refresh", issuedAt: Date().addingTimeInterval(-7_200),
            expiresIn: 3_600)
        let closure = RefreshingRequestClosure(
            client: client, store: store,
            options: .init(
                refreshTimeout: 5, abandonAfter: 10, refreshWindow: RefreshWindow(maximumRefreshes: 1, interval: 600),
                requiresAuthentication: { _ in true }))
        closure.adopt(OAuth2Authentication(token: expired, client: client))
        let request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        for attempt in 0..<3 {
            do {
                _ = try await closure.authorize(request)
                Issue.record("attempt \(attempt) was signed")
            } catch {
                #expect((error as? any RefreshFailure)?.isTransportFailure == true, "attempt \(attempt): \(error)")
            }
        }
    }

    /// A server with every connection it allows taken answers `-ERR max number of clients
    /// reached` to whatever comes first, the `AUTH` included, and closes: that is an outage, not
    /// a refused password. It read as `authenticationFailed`, which told the operator to check the
    /// password and counted against the refresh window.
    @Test(arguments: ["pw", nil] as [String?])
    func aServerWithEveryConnectionTakenIsATransportFailure(password: String?) throws {
        let full = try ScriptedRedisServer(reply: Array("-ERR max number of clients reached\r\n".utf8))
        defer { full.stop() }
        for attempt in ["read", "lock"] {
            // A store of its own for each: the server closes the connection after its answer.
            let store = RedisAuthenticationStore<OAuth2Token>(
                key: "k",
                configuration: RedisConfiguration(
                    port: full.port, password: password, connectTimeout: 5, commandTimeout: 5))
            do {
                if attempt == "read" { _ = try store.read() } else { _ = try store.lock(timeout: 0) }
                Issue.record("\(attempt) succeeded on a full server")
            } catch let error as RedisError {
                guard case .commandFailed(_, let message) = error else {
                    Issue.record("\(attempt): expected commandFailed, got \(error)")
                    continue
                }
                #expect(message == "ERR max number of clients reached")
                #expect(error.isTransportFailure, "\(attempt): \(error)")
            } catch {
                Issue.record("\(attempt): \(error)")
            }
        }
    }

    /// "Nothing a server sends can … crash": also with the bound lifted (`Int.max`), a length
    /// near the largest integer must not overflow the parser's arithmetic.
    @Test func aHugeLengthWithNoBoundIsNoCrash() async {
        await #expect(processExitsWith: .success) {
            for header in ["$9223372036854775807\r\n", "$9223372036854775806\r\n", "*9223372036854775807\r\n"] {
                var parser = RESPParser(maximumReplySize: .max)
                do {
                    try parser.append(Array(header.utf8) + Array("abc".utf8))
                    _ = try parser.next()
                } catch {}
            }
        }
    }

    /// A deadline of `.greatestFiniteMagnitude` (or any beyond ~3.7 billion seconds), the usual way
    /// to say "no deadline", crashed the process as soon as a second thread waited for its turn:
    /// the wait is a lock with a date, whose nanoseconds overflowed. A deadline longer than a year
    /// now counts as a year.
    @Test func aDeadlineWithNoEndIsNoCrashWhenCallsTakeTurns() async {
        #expect(RedisConfiguration.seconds(.greatestFiniteMagnitude) == RedisConfiguration.maximumTimeout)
        #expect(RedisConfiguration.seconds(1e10) == RedisConfiguration.maximumTimeout)
        #expect(RedisConfiguration.seconds(3) == 3)
        await #expect(processExitsWith: .success) { RedisRobustnessTests.callsTakingTurnsWithNoDeadline() }
    }

    /// Five reads of a server that never answers, with no command deadline: the first holds the
    /// client, the others wait for their turn; stopping the server ends them all. Exits with a
    /// non-zero status when something did not go that way.
    private static func callsTakingTurnsWithNoDeadline() {
        guard let silent = try? ScriptedRedisServer(reply: nil) else { exit(2) }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "k",
            configuration: RedisConfiguration(
                port: silent.port, connectTimeout: 1, commandTimeout: .greatestFiniteMagnitude))
        let done = DispatchSemaphore(value: 0)
        let read: @Sendable () -> Void = {
            _ = try? store.read()
            done.signal()
        }
        Thread.detachNewThread(read)
        // The first call holds the client while it waits for its GET's reply.
        guard silent.waitForRequests(1) else { exit(3) }
        for _ in 0..<4 { Thread.detachNewThread(read) }
        // Time for the others to reach their wait for a turn.
        Thread.sleep(forTimeInterval: 0.3)
        silent.stop()
        for _ in 0..<5 where done.wait(timeout: .now() + 30) == .timedOut { exit(4) }
    }

    /// A service that starts other programs must not hand them its connection to Redis: a child
    /// that inherits it keeps it open after the store has dropped it (the server never sees it
    /// close), and holds a socket to a server that knows the password.
    @Test func theConnectionIsNotInheritedByChildProcesses() throws {
        let server = try ScriptedRedisServer(reply: Array("$-1\r\n".utf8), thenClose: false)
        defer { server.stop() }
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "k", configuration: RedisConfiguration(port: server.port, connectTimeout: 5, commandTimeout: 5))
        #expect(try store.read() == nil)
        let descriptors = Self.descriptors(connectedToPort: server.port)
        #expect(descriptors.count == 1)
        for descriptor in descriptors {
            let flags = fcntl(descriptor, F_GETFD)
            #expect(flags >= 0 && flags & FD_CLOEXEC != 0, "descriptor \(descriptor) is inherited by exec")
        }
        withExtendedLifetime(store) {}
    }

    /// This process's sockets whose peer is 127.0.0.1:`port`.
    private static func descriptors(connectedToPort port: Int) -> [Int32] {
        (0..<Int32(4096)).filter { descriptor in
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let found = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            }
            return found == 0 && address.sin_family == sa_family_t(AF_INET)
                && Int(UInt16(bigEndian: address.sin_port)) == port
        }
    }
}
