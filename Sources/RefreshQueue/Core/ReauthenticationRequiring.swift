/// An error that can tell whether the user must log in again.
///
/// A refresh that fails with such an error, saying `true`, means the refresh token is no longer
/// valid (OAuth 2.0 `invalid_grant`): retrying cannot help. ``OAuth2Error`` adopts it; adopt it in
/// your own errors so that stores and handlers built on ``RefreshingRequestClosure`` can react.
public protocol ReauthenticationRequiring: Error {
    /// Whether only a new login can recover from this error.
    var requiresReauthentication: Bool { get }
}

extension RefreshQueueError: ReauthenticationRequiring {
    /// True for ``notAuthenticated``, and for a ``refreshFailed(_:)`` whose underlying error says so.
    public var requiresReauthentication: Bool {
        switch self {
        case .notAuthenticated:
            return true
        case .refreshFailed(let underlying):
            return (underlying as? any ReauthenticationRequiring)?.requiresReauthentication ?? false
        default:
            return false
        }
    }
}
