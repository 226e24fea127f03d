import Foundation
import RefreshQueue
import RefreshQueueRedis
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Redis outage is the network's failure, not a refusal: it never uses up the refresh window.
@Suite("Redis failures and the refresh window", .timeLimit(.minutes(1)))
struct RedisTransportFailureTests {
    /// A token whose refresh meets the Redis error it is given, counting the refreshes.
    struct RedisBackedToken: RefreshableAuthentication {
        let accessToken: String
        let failure: RedisError
        let refreshes: Protected<Int>
        var isRefreshNeeded: Bool { true }

        func refresh() -> Future<RedisBackedToken> {
            refreshes.withLock { $0 += 1 }
            return Future(error: failure)
        }

        static func find() -> RedisBackedToken? { nil }
    }

    @Test(arguments: [
        (RedisError.connectionClosed, true), (.timedOut("GET"), true), (.connectionFailed("refused"), true),
        (.commandFailed(command: "SET", message: "LOADING Redis is loading"), true),
        (.commandFailed(command: "SET", message: "WRONGPASS invalid password"), false),
    ])
    func onlyAnOutageIsATransportFailure(error: RedisError, isTransport: Bool) {
        #expect(error.isTransportFailure == isTransport)
        #expect(!error.requiresReauthentication)
    }

    /// A connection closed in the middle of a call, again and again: each request gets that
    /// error, and never `excessiveRefresh`, however small the window.
    @Test func aConnectionClosedMidCallDoesNotUseUpTheWindow() async throws {
        let refreshes = Protected(0)
        let token = RedisBackedToken(accessToken: "held", failure: .connectionClosed, refreshes: refreshes)
        let closure = RefreshingRequestClosure<RedisBackedToken>(
            options: .init(refreshWindow: RefreshWindow(maximumRefreshes: 2, interval: 30)), find: { token })
        let request = URLRequest(url: URL(string: "https://api.example.test/v1/me")!)
        for _ in 1...5 {
            await #expect(throws: RedisError.connectionClosed) { try await closure.authorize(request) }
        }
        #expect(refreshes.current == 5)
    }
}
