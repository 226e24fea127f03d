/// Why a request could not be authorized.
///
/// No case's text ever contains a token.
public enum RefreshQueueError: Error, Sendable {
    /// No authentication was found: the user is not logged in.
    case notAuthenticated

    /// The refresh did not complete within the closure's `refreshTimeout`.
    case refreshTimedOut

    /// The access token cannot be put in a header: it is empty, or contains control characters
    /// (CR, LF, NUL, …) or characters outside visible ASCII.
    case invalidToken

    /// The refresh failed; the associated error is the one `refresh()` failed with.
    case refreshFailed(any Error)

    /// More refreshes were needed than the closure's ``RefreshWindow`` allows, or a refresh
    /// returned an authentication that still needed a refresh. Usually a server or clock problem.
    case excessiveRefresh

    /// The request was cancelled before it was authorized; it was not signed.
    case cancelled

    /// A header scheme or header name that cannot be used in an HTTP header.
    case invalidConfiguration(String)
}

extension RefreshQueueError: CustomStringConvertible {
    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .notAuthenticated:
            return "Not authenticated: no stored authentication was found; the user needs to log in."
        case .refreshTimedOut:
            return "The token refresh did not complete in time; the request was not sent."
        case .invalidToken:
            return "The access token is empty or contains characters that are not allowed in an HTTP header."
        case .refreshFailed(let underlying):
            return "The token refresh failed: \(underlying)"
        case .excessiveRefresh:
            return "Too many token refreshes in a short time; check the server's token lifetime and the device clock."
        case .cancelled:
            return "The request was cancelled before it was authorized."
        case .invalidConfiguration(let reason):
            return "Invalid authorization configuration: \(reason)"
        }
    }
}
