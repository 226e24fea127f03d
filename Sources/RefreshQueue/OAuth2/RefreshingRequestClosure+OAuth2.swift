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
    ///
    /// - Parameters:
    ///   - client: Refreshes the token at the token endpoint.
    ///   - store: Where the token is loaded from and saved to.
    ///   - leeway: How long before its expiry a token counts as stale (and, earlier, as worth
    ///     refreshing in the background).
    ///   - options: Every other option; see ``Options`` for each default.
    ///   - onReauthenticationRequired: Called once for each ended session (a refresh refused
    ///     because only a new login helps, or the store found emptied by another closure or
    ///     process), after the stored token was removed; not once per refresh or request.
    public convenience init<Store: AuthenticationStore>(
        client: TokenEndpointClient,
        store: Store,
        leeway: TokenLeeway = .default,
        options: Options = Options(),
        onReauthenticationRequired: (@Sendable (any Error) -> Void)? = nil
    ) where Store.Value == OAuth2Token {
        self.init(
            options: options,
            through: StoreBackedRefresh(
                store: store, decode: { OAuth2Authentication(token: $0, client: client, leeway: leeway) },
                encode: \.token, scheme: options.scheme, onReauthenticationRequired: onReauthenticationRequired,
                onEvent: options.onEvent))
    }
}
