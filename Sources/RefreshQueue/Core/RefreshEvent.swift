import Foundation

/// Something a ``RefreshingRequestClosure`` did, for logging and metrics.
///
/// Pass a handler as the closure's `onEvent`. It is called from whichever thread the event happens
/// on, never while the closure holds a lock, so it may call back into the closure. No event
/// carries a token; ``description`` is safe to log.
public enum RefreshEvent: Sendable {
    /// `find()` was consulted because nothing was held; `found` tells whether it returned a value.
    case authenticationLoaded(found: Bool)

    /// A refresh started that requests wait for. `generation` counts the authentications this
    /// closure has held.
    case refreshStarted(generation: UInt64)

    /// A refresh ahead started in the background (the authentication recommended it); requests
    /// are still signed with the current token meanwhile.
    case refreshAheadStarted(generation: UInt64)

    /// A refresh succeeded after `duration` seconds.
    case refreshSucceeded(duration: TimeInterval)

    /// A refresh failed (or returned a value that still needed a refresh) after `duration` seconds.
    case refreshFailed(RefreshQueueError, duration: TimeInterval)

    /// A refresh ahead failed after `duration` seconds. No request was waiting for it (a
    /// `refreshIfNeeded` call that was receives the error): the current token stays in use, and
    /// another refresh ahead is tried later, unless the error says that only a new login helps.
    case refreshAheadFailed(RefreshQueueError, duration: TimeInterval)

    /// Requests waited `refreshTimeout` and were failed. When they waited for a refresh, it is
    /// `after` seconds old, keeps running, and later requests wait for it; when they waited for
    /// `find()` (or for `isRefreshNeeded` to answer), `after` is `refreshTimeout`.
    case refreshTimedOut(after: TimeInterval)

    /// A refresh finished after the requests waiting for it had timed out (or after it was
    /// abandoned); its authentication was still adopted.
    case lateRefreshAdopted(duration: TimeInterval)

    /// A refresh ran for the closure's `abandonAfter` without ending and was given up, `after`
    /// seconds after it started: a new refresh may start. Should it still end, a success is
    /// adopted, unless a newer refresh's result has been adopted since, or `invalidate()` or
    /// `adopt(_:)` was called meanwhile.
    case refreshAbandoned(after: TimeInterval)

    /// A refresh held `count` requests (they waited for it) for `duration` seconds, from the first
    /// one's arrival until the last was released.
    case refreshHeldRequests(count: Int, duration: TimeInterval)

    /// A request started waiting; `waiting` requests are now queued.
    case requestWaiting(waiting: Int)

    /// A refresh ended and the queue runs again; `waiting` requests were queued behind it.
    case requestsResumed(waiting: Int)

    /// A refresh was refused because too many happened recently.
    case refreshRefused(RefreshQueueError)

    /// A refreshed authentication could not be saved to its store; it is still used from memory.
    /// The text names the error only by type and code.
    case saveFailed(String)

    /// The refresh found in the store an authentication that another closure or process had
    /// refreshed meanwhile, and adopted it: no token request was sent. The refresh's end follows
    /// (``refreshSucceeded(duration:)``, or ``lateRefreshAdopted(duration:)`` for a refresh its
    /// waiters stopped waiting for; nothing after an `invalidate()` or `adopt(_:)` meanwhile).
    case adoptedFromStore

    /// A request went out unsigned because its origin (`scheme://host:port`) is not among the
    /// allowed origins; reported once for each such origin, so that a mistyped origin does not
    /// fail silently, with a 401 from the server.
    case requestSentUnsigned(origin: String)
}

extension RefreshEvent: CustomStringConvertible {
    /// One line for a log. Never contains a token.
    public var description: String {
        switch self {
        case .authenticationLoaded(let found):
            return found ? "authentication loaded" : "no authentication found"
        case .refreshStarted(let generation):
            return "refresh started (generation \(generation))"
        case .refreshAheadStarted(let generation):
            return "refresh ahead started (generation \(generation))"
        case .refreshAheadFailed(let error, let duration):
            return "refresh ahead failed in \(Self.milliseconds(duration)), current token kept: \(error)"
        case .refreshAbandoned(let after):
            return "refresh abandoned after \(Self.milliseconds(after))"
        case .refreshHeldRequests(let count, let duration):
            return "refresh held \(count) \(count == 1 ? "request" : "requests") for \(Self.milliseconds(duration))"
        case .refreshSucceeded(let duration):
            return "refresh succeeded in \(Self.milliseconds(duration))"
        case .refreshFailed(let error, let duration):
            return "refresh failed in \(Self.milliseconds(duration)): \(error)"
        case .refreshTimedOut(let after):
            return "refresh timed out after \(Self.milliseconds(after))"
        case .lateRefreshAdopted(let duration):
            return "late refresh adopted after \(Self.milliseconds(duration))"
        case .requestWaiting(let waiting):
            return "request waiting (\(waiting) queued)"
        case .requestsResumed(let waiting):
            return "queue resumed (\(waiting) queued)"
        case .refreshRefused(let error):
            return "refresh refused: \(error)"
        case .saveFailed(let reason):
            return "saving the refreshed authentication failed (\(reason))"
        case .adoptedFromStore:
            return "adopted the authentication another process refreshed meanwhile; no token request sent"
        case .requestSentUnsigned(let origin):
            return "a request to \(origin) went out unsigned: its origin is not allowed"
        }
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        // Saturated, in 64 bits on every platform: a clock gone wrong must not crash a log line.
        let value = (seconds * 1000).rounded()
        guard value.isFinite else { return "? ms" }
        return "\(Int64(saturating: value)) ms"
    }
}
