import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure where Authentication == OAuth2Authentication {
    /// OAuth 2.0 with nothing to write yourself: tokens from `store`, refreshed by `client`.
    ///
    /// ```swift
    /// let client = TokenEndpointClient(tokenURL: tokenURL, clientID: "id", clientSecret: "secret")
    /// let store = try FileAuthenticationStore<OAuth2Token>(fileURL: tokenFileURL)
    /// let authentication = RefreshingRequestClosure(
    ///     client: client, store: store, onReauthenticationRequired: { _ in showLogin() })
    /// let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
    /// ```
    ///
    /// A ``FileAuthenticationStore`` is shared safely with other processes: each refresh happens
    /// under the store's lock, and a token another process refreshed meanwhile is adopted instead
    /// of refreshed again.
    /// When the refresh token is refused (`invalid_grant`), the stored token is removed and
    /// `onReauthenticationRequired` is called once for that failure.
    public convenience init<Store: AuthenticationStore>(
        client: TokenEndpointClient,
        store: Store,
        leeway: TokenLeeway = .default,
        refreshTimeout: TimeInterval = 30,
        abandonAfter: TimeInterval? = nil,
        refreshWindow: RefreshWindow = .default,
        origins: AllowedOrigins = .all,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool = { _ in true },
        onEvent: (@Sendable (RefreshEvent) -> Void)? = nil,
        onReauthenticationRequired: (@Sendable (any Error) -> Void)? = nil
    ) where Store.Value == OAuth2Token {
        self.init(
            refreshTimeout: refreshTimeout, abandonAfter: abandonAfter, refreshWindow: refreshWindow, scheme: .bearer,
            missingAuthentication: .fail, origins: origins, requiresAuthentication: requiresAuthentication,
            through: StoreBackedRefresh(
                store: store, decode: { OAuth2Authentication(token: $0, client: client, leeway: leeway) },
                encode: \.token, scheme: .bearer, onReauthenticationRequired: onReauthenticationRequired,
                onEvent: onEvent),
            onEvent: onEvent, clock: { ProcessInfo.processInfo.systemUptime })
    }
}
