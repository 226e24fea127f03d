/// An authentication that can tell when its access token is stale and knows how to refresh it.
///
/// This is the protocol of RxMoyaAuthenticatable with RxSwift's `Single<Self>` replaced by
/// ``Future``. A type written for the seed library ports by changing the return type of
/// `refresh()`:
///
/// ```swift
/// struct SpotifyAuthentication: RefreshableAuthentication {
///     let accessToken: String
///     let refreshToken: String
///     let expiresAt: Date
///
///     var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 60 }
///
///     func refresh() -> Future<SpotifyAuthentication> {
///         Future { complete in
///             tokenClient.refresh(using: refreshToken) { result in
///                 complete(result.map { response in
///                     // Keep the old refresh token when the server sends none (RFC 6749 §6).
///                     SpotifyAuthentication(accessToken: response.accessToken,
///                                           refreshToken: response.refreshToken ?? refreshToken,
///                                           expiresAt: Date() + response.expiresIn)
///                 })
///             }
///         }
///     }
///
///     static func find() -> SpotifyAuthentication? { store.load() }
/// }
/// ```
///
/// ``RefreshingRequestClosure`` never calls these members while it holds a lock. It reads
/// `isRefreshNeeded` and `isRefreshRecommended` from any thread (from the caller's thread when
/// signing without waiting), so they must be cheap and thread-safe; `find()` is called on the
/// closure's queue; `refresh()` is called on a global dispatch queue, never twice at once for the
/// same authentication. Only a refresh that never ends is given up, after the closure's
/// `abandonAfter`; then, and only then, may another refresh of the same token start while it runs.
/// After a refresh failed, the next one that is needed calls `refresh()` on the same value again.
public protocol RefreshableAuthentication: Sendable {
    /// Whether the access token must be refreshed before it is used.
    ///
    /// Read before signing requests. While it is `true`, requests wait for a refresh. Return
    /// `true` a little before the token actually expires, so that a request signed now does not
    /// reach the server after expiry.
    var isRefreshNeeded: Bool { get }

    /// Whether a refresh should start now, in the background, although the token still works.
    ///
    /// Refresh ahead: while this is `true` and ``isRefreshNeeded`` is `false`, requests are signed
    /// at once with the current token and one refresh runs in the background; no request waits
    /// for it (a ``RefreshingRequestClosure/refreshIfNeeded(completion:)`` call does). When it
    /// succeeds, the new token signs from then on; when it fails, the current token stays in use
    /// and the closure tries again later, unless the failure says that only a new login helps
    /// (``RefreshFailure/requiresReauthentication``): then no refresh ahead of that token is
    /// tried again. Return `true` some time before
    /// ``isRefreshNeeded`` would, so that the refresh is done before anyone has to wait for it.
    ///
    /// The default implementation returns `false`: no refresh ahead.
    var isRefreshRecommended: Bool { get }

    /// The access token that signs requests, without any scheme prefix such as `Bearer`.
    ///
    /// Read when the authentication is found, refreshed, adopted or saved (a few times each), never
    /// per request. An empty token, or one with control characters, is refused with
    /// ``RefreshQueueError/invalidToken``.
    var accessToken: String { get }

    /// Obtains a fresh authentication, for example with an OAuth 2.0 `refresh_token` grant.
    ///
    /// Called once for all the requests waiting, however many; never twice at once for the same
    /// value, unless the first call runs past the closure's `abandonAfter` and is given up (after
    /// a failure, a later request may call it again). Complete the future with the
    /// new authentication; persisting it is up to you (the closure keeps the new value in memory
    /// either way). Complete it with an error when the refresh fails: every waiting request then
    /// fails with that error, as it is; keep tokens out of its text, since apps log what they
    /// catch. Adopt ``RefreshFailure`` in it to say whether only a new login helps.
    ///
    /// Do not send the refresh itself through the closure that is refreshing: it would wait for
    /// itself until ``RefreshingRequestClosure``'s `refreshTimeout` fails that wait.
    func refresh() -> Future<Self>

    /// The persisted authentication, or `nil` when the user is not logged in.
    ///
    /// Called only when the closure holds nothing: for the first request, after
    /// ``RefreshingRequestClosure/invalidate()``, after a refresh that requests waited for failed
    /// in a way that only a new login cures (``RefreshFailure/requiresReauthentication``), and,
    /// for as long as it returns `nil`, for every request that needs signing (on the closure's
    /// queue), so that a login saved elsewhere is picked up without a call to `invalidate()`.
    /// Keep it cheap when there is nothing to find.
    static func find() -> Self?
}

extension RefreshableAuthentication {
    /// `false`: without an implementation of its own, an authentication is refreshed only when
    /// ``isRefreshNeeded`` says so.
    public var isRefreshRecommended: Bool { false }
}
