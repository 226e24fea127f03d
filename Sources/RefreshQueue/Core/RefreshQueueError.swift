import Foundation

/// Why a request could not be authorized, other than a failed refresh: the requests that waited
/// for a refresh that failed fail with the error `refresh()` failed with.
///
/// No case's text ever contains a token. For ``refreshFailed(_:)`` the text names the underlying
/// error only by its type and code, since its own text may quote a URL or a response body, unless
/// it is a ``TokenFreeError``; the underlying error itself is there for code to inspect.
public enum RefreshQueueError: Error, Sendable {
    /// No authentication was found: the user is not logged in.
    case notAuthenticated

    /// The request waited the closure's `refreshTimeout` for a refresh that has not ended (or for
    /// `find()`). The refresh itself keeps running; later requests wait for it again.
    case refreshTimedOut

    /// The access token cannot be put in a header: it is empty, starts or ends with a space, or
    /// contains control characters (CR, LF, NUL, …) or characters outside printable ASCII.
    case invalidToken

    /// The refresh failed; the associated error is the one `refresh()` failed with.
    ///
    /// Events carry a failed refresh's error in this case
    /// (``RefreshEvent/refreshFailed(_:duration:)``, ``RefreshEvent/refreshAheadFailed(_:duration:)``),
    /// so that their text stays free of tokens. Requests never fail with it: the requests that
    /// waited for the refresh fail with the associated error itself.
    case refreshFailed(any Error)

    /// More refreshes were needed than the closure's ``RefreshWindow`` allows, or a refresh
    /// returned an authentication that still needed a refresh. Usually a server or clock problem.
    case excessiveRefresh

    /// The request was cancelled before it was authorized; it was not signed.
    case cancelled

    /// A header scheme or header name that cannot be used in an HTTP header.
    case invalidConfiguration(String)

    /// The stored authentication exists but cannot be read now: the device keeps it locked (iOS
    /// data protection before the first unlock), or its file's permissions changed. The user is
    /// not logged out; try again later. The associated error is the store's.
    case authenticationUnreadable(any Error)

    /// The request would be signed but goes to plain `http://` (or `ws://`) on `host`, another
    /// machine: the token would travel unencrypted. Use https (wss), or
    /// ``AllowedOrigins/allowingPlainHTTP()`` for a development server. The request was not signed.
    ///
    /// A request to this machine fails so too when the environment sends it through a proxy on
    /// `host`, another machine (on Linux: `http_proxy` or `all_proxy`, unless `no_proxy` lists the
    /// request's host, `localhost` say).
    case insecureRequest(host: String)
}

extension RefreshQueueError: CustomStringConvertible {
    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .notAuthenticated:
            return "Not authenticated: no stored authentication was found; the user needs to log in."
        case .refreshTimedOut:
            return "The token refresh did not complete in time; the request was not sent. "
                + "Try again later: the refresh keeps running, and later requests wait for it."
        case .invalidToken:
            return "The access token is empty or contains characters that are not allowed in an HTTP header; "
                + "the request was not sent. Check the token your authentication returns."
        case .refreshFailed(let underlying):
            return "The token refresh failed (\(Self.summary(of: underlying)))."
        case .excessiveRefresh:
            return "Too many token refreshes in a short time; check the server's token lifetime and the device clock."
        case .cancelled:
            return "The request was cancelled before it was authorized; it was not sent."
        case .invalidConfiguration(let reason):
            return "Invalid authorization configuration: \(reason)"
        case .authenticationUnreadable(let underlying):
            return "The stored authentication cannot be read now (\(Self.summary(of: underlying))); "
                + "the user is still logged in. \(Self.unreadableAdvice)"
        case .insecureRequest(let host):
            let printable = String(
                host.unicodeScalars.filter { (0x21...0x7E).contains($0.value) }.map(Character.init).prefix(100))
            return "The request goes to \(printable) without encryption (http or ws), or through a proxy there "
                + "(http_proxy or all_proxy; no_proxy lists the hosts reached directly); the token is only sent over "
                + "https or wss, or to this machine directly. The request was not signed."
        }
    }
}

extension RefreshQueueError {
    /// When to try reading the store again: where data protection locks files, once the device is
    /// unlocked; elsewhere once the process may read the store (its permissions, its server).
    static var unreadableAdvice: String {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return "Try again once the device is unlocked."
        #else
        return "Try again once this process may read the store (check the file's owner and permissions)."
        #endif
    }
}

extension RefreshQueueError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` is readable on Apple platforms.
    public var errorDescription: String? { description }
}

extension RefreshQueueError {
    /// What a request fails with for this error: the refresh's own error for a
    /// ``refreshFailed(_:)`` (which carries it in events, where the text must stay token-free),
    /// this error itself otherwise.
    var requestError: any Error {
        if case .refreshFailed(let underlying) = self { return underlying }
        return self
    }

    /// A token-free summary of an error: its type, and its domain and code where it has them.
    static func summary(of error: any Error) -> String {
        if let described = error as? any TokenFreeError {
            return described.description
        }
        let type = String(describing: Swift.type(of: error))
        let nsError = error as NSError
        if nsError.domain.isEmpty || nsError.domain.contains(type) {
            return "\(type) \(nsError.code)"
        }
        return "\(type), \(nsError.domain) \(nsError.code)"
    }
}

extension RefreshQueueError: TokenFreeError {}
