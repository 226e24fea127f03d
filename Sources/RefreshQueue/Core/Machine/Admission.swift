import Foundation

/// Whether a refresh may start now: the refresh window, which counts the refreshes a loop caused
/// recently, and a pause the server asked for (`Retry-After`).
///
/// Counted are refreshes that a loop causes: a failed refresh the server refused, a refreshed
/// token stale on arrival or rejected while still fresh. Refreshes that tokens' lifetimes call
/// for, ahead or at expiry, are not: short-lived tokens must never lock the app out.
struct Admission: Sendable {
    /// When the counted refreshes happened, oldest first; those older than the window are
    /// forgotten when the window is next asked.
    private(set) var counted: [TimeInterval] = []
    /// The window refused a refresh and none has started since: the refusal was reported.
    private(set) var refusing = false
    /// No refresh before its end: the server asked for a pause.
    private(set) var pause: Backoff?

    /// Counts a refresh a loop caused, at `now`.
    mutating func count(now: TimeInterval) {
        counted.append(now)
    }

    /// The pause in force at `now`, if any.
    func pause(at now: TimeInterval) -> Backoff? {
        guard let pause, now < pause.until else { return nil }
        return pause
    }

    /// Pauses refreshes for `delay` from `now`, failing them with `error` meanwhile; returns the
    /// pause it replaces, to be released outside the lock (its error may be the app's).
    mutating func pause(for delay: TimeInterval, failingWith error: RefreshQueueError, now: TimeInterval) -> Backoff? {
        defer { pause = Backoff(until: now + delay, error: error) }
        return pause
    }

    /// Whether `window` has room for a refresh at `now`. A refresh ahead leaves one place free,
    /// for the refresh that expiry will need.
    mutating func admits(ahead: Bool, now: TimeInterval, window: RefreshWindow) -> Bool {
        counted.removeAll { now - $0 >= window.interval }
        // The window has room again: a later refusal starts a new episode, reported anew.
        if counted.count < window.maximumRefreshes { refusing = false }
        let limit = ahead ? window.maximumRefreshes - 1 : window.maximumRefreshes
        return counted.count < limit
    }

    /// The window refused a needed refresh: whether this refusal starts an episode, to be
    /// reported once however many requests it fails.
    mutating func refuse() -> Bool {
        defer { refusing = true }
        return !refusing
    }

    /// A refresh started: the next refusal is news.
    mutating func started() {
        refusing = false
    }
}

/// A `Retry-After` in force: until `until`, refreshes fail with `error`.
struct Backoff: Sendable {
    let until: TimeInterval
    let error: RefreshQueueError
}
