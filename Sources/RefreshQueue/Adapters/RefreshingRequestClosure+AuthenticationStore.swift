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
    /// A refreshed authentication is adopted only if the store still held what was refreshed when
    /// it was saved: after a logout or another login meanwhile, the closure loads afresh instead.
    ///
    /// A refresh that fails because the user must log in again (an error whose
    /// ``ReauthenticationRequiring/requiresReauthentication`` is `true`, such as `invalid_grant`)
    /// removes the stored authentication and calls `onReauthenticationRequired` once for that
    /// failure. The other parameters are those of ``init(refreshTimeout:abandonAfter:refreshWindow:scheme:missingAuthentication:requiresAuthentication:find:onEvent:clock:)``.
    public convenience init<Store: AuthenticationStore>(
        store: Store,
        refreshTimeout: TimeInterval = 30,
        abandonAfter: TimeInterval? = nil,
        refreshWindow: RefreshWindow = .default,
        scheme: AuthorizationScheme = .bearer,
        missingAuthentication: MissingAuthenticationPolicy = .fail,
        origins: AllowedOrigins = .all,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool = { _ in true },
        onReauthenticationRequired: (@Sendable (any Error) -> Void)? = nil,
        onEvent: (@Sendable (RefreshEvent) -> Void)? = nil,
        clock: @escaping @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }
    ) where Store.Value == Authentication {
        self.init(
            refreshTimeout: refreshTimeout, abandonAfter: abandonAfter, refreshWindow: refreshWindow, scheme: scheme,
            missingAuthentication: missingAuthentication, origins: origins,
            requiresAuthentication: requiresAuthentication,
            through: StoreBackedRefresh(
                store: store, decode: { $0 }, encode: { $0 }, scheme: scheme,
                onReauthenticationRequired: onReauthenticationRequired, onEvent: onEvent),
            onEvent: onEvent, clock: clock)
    }

    /// A closure that loads and refreshes through `storeRefresh`.
    convenience init(
        refreshTimeout: TimeInterval,
        abandonAfter: TimeInterval?,
        refreshWindow: RefreshWindow,
        scheme: AuthorizationScheme,
        missingAuthentication: MissingAuthenticationPolicy,
        origins: AllowedOrigins,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool,
        through storeRefresh: StoreBackedRefresh<Authentication>,
        onEvent: (@Sendable (RefreshEvent) -> Void)?,
        clock: @escaping @Sendable () -> TimeInterval
    ) {
        self.init(
            refreshTimeout: refreshTimeout, abandonAfter: abandonAfter, refreshWindow: refreshWindow, scheme: scheme,
            missingAuthentication: missingAuthentication, origins: origins,
            requiresAuthentication: requiresAuthentication,
            find: storeRefresh.load, refresh: storeRefresh.refresh(_:within:), onEvent: onEvent, clock: clock)
    }
}
