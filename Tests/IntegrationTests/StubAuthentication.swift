import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An authentication against a running `SpotifyStub`, refreshed over real HTTP.
struct StubAuthentication: RefreshableAuthentication {
    let accessToken: String
    let refreshToken: String
    /// Monotonic expiry, in `ProcessInfo.systemUptime` seconds.
    let expiresAt: TimeInterval
    let lifetime: TimeInterval
    let accounts: StubAccounts

    /// Refreshes when less than `accounts.leewayFraction` of the lifetime is left, so a signed
    /// request reaches the loopback server long before its token expires.
    var isRefreshNeeded: Bool {
        expiresAt - ProcessInfo.processInfo.systemUptime < lifetime * accounts.leewayFraction
    }

    func refresh() -> Future<StubAuthentication> {
        let old = self
        return Future(operation: { try await old.accounts.refresh(old) })
    }

    static func find() -> StubAuthentication? { nil }

    /// The same authentication with its access token already expired.
    var expired: StubAuthentication {
        StubAuthentication(
            accessToken: accessToken, refreshToken: refreshToken,
            expiresAt: ProcessInfo.processInfo.systemUptime - 1, lifetime: lifetime, accounts: accounts)
    }

    /// The same authentication, whose refreshes go through `accounts`.
    func refreshing(through accounts: StubAccounts) -> StubAuthentication {
        StubAuthentication(
            accessToken: accessToken, refreshToken: refreshToken, expiresAt: expiresAt, lifetime: lifetime,
            accounts: accounts)
    }
}

/// Why a refresh against the stub failed.
enum StubRefreshError: Error, Equatable {
    /// `invalid_grant`: the refresh token is no good; the user must log in again.
    case reauthenticationRequired
    /// Any other error answer from the token endpoint.
    case server(status: Int)
    /// A 200 whose body is not a token response.
    case malformedResponse
}

/// The token endpoint of one stub, as the app would call it.
struct StubAccounts: Sendable {
    let stub: SpotifyStub
    let session: URLSession
    /// When set, the app believes every token lives this long, whatever the server says.
    var assumedLifetime: TimeInterval?
    /// The part of a token's lifetime left when it is refreshed.
    var leewayFraction: Double = 0.5
    /// Awaited before each refresh request is sent.
    var beforeRefresh: @Sendable () async -> Void = {}

    /// Logs in with the authorization-code flow.
    func logIn() async throws -> StubAuthentication {
        let tokens = try await StubHarness.login(stub, session: session)
        return StubAuthentication(
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? "",
            expiresAt: ProcessInfo.processInfo.systemUptime + tokens.expiresIn, lifetime: tokens.expiresIn,
            accounts: self)
    }

    /// The `refresh_token` grant; keeps the refresh token when the answer has none.
    func refresh(_ old: StubAuthentication) async throws -> StubAuthentication {
        await beforeRefresh()
        let request = StubHarness.tokenRequest(
            stub, [("grant_type", "refresh_token"), ("refresh_token", old.refreshToken)])
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        guard status == 200 else {
            if json?["error"] as? String == "invalid_grant" { throw StubRefreshError.reauthenticationRequired }
            throw StubRefreshError.server(status: status)
        }
        guard let accessToken = json?["access_token"] as? String,
            let expiresIn = (json?["expires_in"] as? NSNumber)?.doubleValue
        else {
            throw StubRefreshError.malformedResponse
        }
        let lifetime = assumedLifetime ?? expiresIn
        return StubAuthentication(
            accessToken: accessToken, refreshToken: json?["refresh_token"] as? String ?? old.refreshToken,
            expiresAt: ProcessInfo.processInfo.systemUptime + lifetime, lifetime: lifetime, accounts: self)
    }

    /// `GET /v1/me` signed by `closure`: the HTTP status, or the error that stopped the request.
    ///
    /// With `retryingAfter401`, it goes through the closure's URLSession adapter, which refreshes
    /// and retries once when a token expired in flight.
    func me(
        through closure: RefreshingRequestClosure<StubAuthentication>, retryingAfter401: Bool = false
    ) async -> Result<Int, any Error> {
        let request = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        do {
            let response: URLResponse
            if retryingAfter401 {
                (_, response) = try await closure.data(for: request, using: session)
            } else {
                (_, response) = try await session.data(for: try await closure.authorize(request))
            }
            return .success((response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            return .failure(error)
        }
    }
}

extension RefreshingRequestClosure where Authentication == StubAuthentication {
    /// A closure that starts out holding `authentication` and signs only the stub's API.
    static func holding(
        _ authentication: StubAuthentication, refreshTimeout: TimeInterval = 30, abandonAfter: TimeInterval? = nil,
        refreshWindow: RefreshWindow = .default, onEvent: (@Sendable (RefreshEvent) -> Void)? = nil
    ) -> Self {
        let held = LoadOnce(authentication)
        return Self(
            options: .init(
                refreshTimeout: refreshTimeout,
                abandonAfter: abandonAfter,
                refreshWindow: refreshWindow,
                requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true },
                onEvent: onEvent
            ),
            find: { held.take() }
        )
    }
}

/// Hands out a value once; `find()` after that finds nothing.
final class LoadOnce<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    init(_ value: Value) {
        self.value = value
    }

    func take() -> Value? {
        lock.lock()
        defer { lock.unlock() }
        defer { value = nil }
        return value
    }
}
