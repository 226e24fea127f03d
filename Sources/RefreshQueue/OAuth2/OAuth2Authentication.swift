import Dispatch
import Foundation

/// The built-in ``RefreshableAuthentication`` for OAuth 2.0: a token plus the client that
/// refreshes it. With it, the common case needs no type of your own.
///
/// ```swift
/// let client = TokenEndpointClient(tokenURL: tokenURL, clientID: "id", clientSecret: "secret")
/// let store = try FileAuthenticationStore<OAuth2Token>(fileURL: tokenFileURL)
/// let authentication = RefreshingRequestClosure(client: client, store: store)
/// let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
/// ```
///
/// It refreshes ahead, in the background, once less than the ``TokenLeeway`` is left, and makes
/// requests wait only within the leeway's safety margin of expiry; it refreshes with the
/// `refresh_token` grant.
/// `find()` returns `nil`: persist the token with an ``AuthenticationStore`` (as above) or pass
/// your own `find` to ``RefreshingRequestClosure``.
public struct OAuth2Authentication: RefreshableAuthentication {
    /// The token.
    public let token: OAuth2Token
    /// The client that refreshes it.
    public let client: TokenEndpointClient
    /// How early before expiry a refresh is due.
    public let leeway: TokenLeeway

    /// Creates an authentication from a token and its client.
    public init(token: OAuth2Token, client: TokenEndpointClient, leeway: TokenLeeway = .default) {
        self.token = token
        self.client = client
        self.leeway = leeway
    }

    /// Whether less than the leeway's safety margin is left before the access token expires, by
    /// the client's clock: requests wait for a refresh.
    public var isRefreshNeeded: Bool {
        token.isRefreshNeeded(at: client.now(), leeway: leeway)
    }

    /// Whether less than the leeway is left, by the client's clock: a refresh starts in the
    /// background while requests are still signed with this token.
    public var isRefreshRecommended: Bool {
        token.isRefreshRecommended(at: client.now(), leeway: leeway)
    }

    /// The access token.
    public var accessToken: String { token.accessToken }

    /// The `refresh_token` grant; the result keeps the refresh token when the server sends none.
    public func refresh() -> Future<OAuth2Authentication> {
        let token = self.token
        let client = self.client
        let leeway = self.leeway
        return Future(operation: {
            OAuth2Authentication(token: try await client.refresh(token), client: client, leeway: leeway)
        })
    }

    /// Always `nil`: the built-in authentication is loaded from a store.
    public static func find() -> OAuth2Authentication? { nil }
}

extension OAuth2Authentication: BudgetedRefresh {
    /// The `refresh_token` grant, its request ending before the closure would abandon it.
    func refresh(within budget: RefreshBudget) -> any Sendable {
        let (token, client, leeway) = (self.token, self.client, self.leeway)
        let deadline = budget.workDeadline
        return Future<OAuth2Authentication>(operation: {
            OAuth2Authentication(
                token: try await client.refresh(token, deadline: deadline), client: client, leeway: leeway)
        })
    }
}

extension OAuth2Authentication: CustomStringConvertible {
    /// The token's redacted description.
    public var description: String { "OAuth2Authentication(\(token))" }
}

extension OAuth2Authentication: StoredSessionIdentity {
    /// The access token and the refresh token: a refresh that rotated only the refresh token
    /// made another session.
    var storedSessionIdentity: String {
        token.accessToken + "\u{0}" + (token.refreshToken ?? "")
    }
}
