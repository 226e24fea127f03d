import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error that says what a failed refresh means: whether only a new login helps, whether the
/// network failed rather than the server refusing, and how long the server asked to wait.
///
/// ``RefreshingRequestClosure`` reads it from the error a refresh fails with:
/// - ``requiresReauthentication``: a store-backed closure removes the stored authentication and
///   calls its `onReauthenticationRequired` (OAuth 2.0 `invalid_grant`).
/// - ``isTransportFailure``: the refresh is not counted against the ``RefreshWindow``, so that a
///   phone that was offline does not lock itself out once it is back. A bare `URLError` counts
///   as one without this.
/// - ``retryAfter``: no new refresh starts before that time; requests arriving meanwhile fail at
///   once with the same error instead of hammering a server that asked for a pause.
///
/// ``OAuth2Error`` and ``RefreshQueueError`` adopt it. Adopt it in the errors your own
/// `refresh()` fails with; each property defaults to "no" (`false`, `nil`), so implement only
/// what your error knows:
///
/// ```swift
/// enum SessionError: Error, RefreshFailure {
///     case revoked, offline(URLError), throttled(seconds: TimeInterval)
///
///     var requiresReauthentication: Bool {
///         if case .revoked = self { return true }
///         return false
///     }
///     var isTransportFailure: Bool {
///         if case .offline = self { return true }
///         return false
///     }
///     var retryAfter: TimeInterval? {
///         if case .throttled(let seconds) = self { return seconds }
///         return nil
///     }
/// }
/// ```
public protocol RefreshFailure: Error {
    /// Whether only a new login can recover from this error: the refresh token expired or was
    /// revoked.
    var requiresReauthentication: Bool { get }

    /// Whether the refresh failed because the network did (offline, timed out, connection lost)
    /// rather than because the server refused.
    var isTransportFailure: Bool { get }

    /// Seconds to wait before the next refresh, like an HTTP `Retry-After`; `nil` when the error
    /// does not say. At most a day is honoured.
    var retryAfter: TimeInterval? { get }
}

extension RefreshFailure {
    /// `false`: retrying later may help.
    public var requiresReauthentication: Bool { false }

    /// `false`: the server refused.
    public var isTransportFailure: Bool { false }

    /// `nil`: the error does not say how long to wait.
    public var retryAfter: TimeInterval? { nil }
}

/// How the closure reads any error a refresh failed with.
enum ErrorClassification {
    /// Whether only a new login helps.
    static func requiresReauthentication(_ error: any Error) -> Bool {
        (error as? any RefreshFailure)?.requiresReauthentication ?? false
    }

    /// Whether the refresh failed because the network failed, not because the server refused.
    static func isTransportFailure(_ error: any Error) -> Bool {
        if error is URLError { return true }
        if let failure = error as? any RefreshFailure, failure.isTransportFailure { return true }
        return (error as NSError).domain == NSURLErrorDomain
    }

    /// How long the server asked to wait before the next refresh, if it did: at most a day, so
    /// that a wrong header cannot lock the app out for longer (an infinite one is a day too).
    static func retryAfter(_ error: any Error) -> TimeInterval? {
        guard let delay = (error as? any RefreshFailure)?.retryAfter, !delay.isNaN else { return nil }
        return min(delay, 86_400)
    }
}

extension RefreshQueueError: RefreshFailure {
    /// True for ``notAuthenticated``, and for a ``refreshFailed(_:)`` whose underlying error says so.
    public var requiresReauthentication: Bool {
        switch self {
        case .notAuthenticated: return true
        case .refreshFailed(let underlying): return ErrorClassification.requiresReauthentication(underlying)
        default: return false
        }
    }

    /// True for a ``refreshFailed(_:)`` whose underlying error is a network failure (a `URLError`,
    /// or a ``RefreshFailure`` that says so).
    public var isTransportFailure: Bool {
        if case .refreshFailed(let underlying) = self { return ErrorClassification.isTransportFailure(underlying) }
        return false
    }

    /// The delay a ``refreshFailed(_:)``'s underlying error asked for, if it did.
    public var retryAfter: TimeInterval? {
        if case .refreshFailed(let underlying) = self { return ErrorClassification.retryAfter(underlying) }
        return nil
    }
}
