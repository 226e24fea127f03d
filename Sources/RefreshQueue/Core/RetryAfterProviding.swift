import Foundation

/// An error that says how long to wait before trying again, like an HTTP `Retry-After`.
///
/// When a refresh fails with such an error, ``RefreshingRequestClosure`` starts no new refresh
/// until that time has passed: requests arriving meanwhile fail at once with the same error
/// instead of hammering a server that asked for a pause. ``OAuth2Error`` adopts it for `503`
/// and other answers that carry `Retry-After`.
public protocol RetryAfterProviding: Error {
    /// Seconds to wait before the next attempt, or `nil` when the error does not say.
    var retryAfter: TimeInterval? { get }
}
