import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// A closure that loads the authentication from `store` when it holds none, and saves it
    /// after every refresh.
    ///
    /// ```swift
    /// let store = InMemoryAuthenticationStore<MyAuthentication>(loggedInValue)
    /// let authentication = RefreshingRequestClosure(store: store)
    /// ```
    ///
    /// A store shared with other processes (a ``CoordinatedAuthenticationStore`` such as
    /// ``FileAuthenticationStore``) is refreshed at most once across all of them: each refresh
    /// takes the store's lock (waiting at most half of `abandonAfter`), loads what is stored, adopts it
    /// if another process refreshed meanwhile, and otherwise refreshes and saves under the lock.
    /// With a rotating refresh token, two processes refreshing at once would make the server
    /// revoke the whole token family (RFC 9700 §4.14.2); this prevents it.
    ///
    /// A refreshed authentication is dropped, and the closure loads afresh, only when the store
    /// holds another session or none by the time of the save (a logout or another login
    /// meanwhile). If the save fails, or the store cannot be read then or keeps changing under
    /// it, the result is used all the same and ``RefreshEvent/saveFailed(_:)`` is reported: its
    /// refresh token may be the only one the server still accepts.
    ///
    /// A refresh that fails because the user must log in again (an error whose
    /// ``RefreshFailure/requiresReauthentication`` is `true`, such as `invalid_grant`)
    /// removes the stored authentication and calls `onReauthenticationRequired` once for that
    /// failure.
    ///
    /// - Parameters:
    ///   - store: Where the authentication is loaded from and saved to.
    ///   - options: Every other option; see ``Options`` for each default.
    ///   - onReauthenticationRequired: Called once for each ended session (a refresh refused
    ///     because only a new login helps, or the store found emptied by another closure or
    ///     process), after the stored authentication was removed; not once per refresh or request.
    public convenience init<Store: AuthenticationStore>(
        store: Store,
        options: Options = Options(),
        onReauthenticationRequired: (@Sendable (any Error) -> Void)? = nil
    ) where Store.Value == Authentication {
        self.init(
            options: options,
            through: StoreBackedRefresh(
                store: store, decode: { $0 }, encode: { $0 }, scheme: options.scheme,
                onReauthenticationRequired: onReauthenticationRequired, onEvent: options.onEvent))
    }

    /// A closure that loads and refreshes through `storeRefresh`.
    convenience init(options: Options, through storeRefresh: StoreBackedRefresh<Authentication>) {
        self.init(options: options, find: storeRefresh.load, refresh: storeRefresh.refresh(_:within:))
    }
}
