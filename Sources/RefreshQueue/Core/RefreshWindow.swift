import Foundation

/// How many refreshes a ``RefreshingRequestClosure`` allows within a sliding time window.
///
/// A server that keeps answering with tokens that are already stale, or a device clock far off,
/// would otherwise make every request refresh. Past the limit, requests fail with
/// ``RefreshQueueError/excessiveRefresh`` until older refreshes leave the window.
///
/// Refreshes that failed with a transport error (`URLError`: offline, timed out, DNS) do not
/// count: an offline phone retrying must not lock itself out once it is back online.
public struct RefreshWindow: Sendable, Equatable {
    /// The most refreshes allowed within ``interval``.
    public let maximumRefreshes: Int

    /// The length of the sliding window, in seconds.
    public let interval: TimeInterval

    /// Five refreshes in thirty seconds.
    public static let `default` = RefreshWindow(maximumRefreshes: 5, interval: 30)

    /// No limit. Use only when the server is trusted to issue tokens that last.
    public static let unlimited = RefreshWindow(maximumRefreshes: .max, interval: 0)

    /// Creates a window of `maximumRefreshes` refreshes per `interval` seconds.
    ///
    /// Values below 1 refresh or 0 seconds are raised to those minimums.
    public init(maximumRefreshes: Int, interval: TimeInterval) {
        self.maximumRefreshes = max(1, maximumRefreshes)
        self.interval = interval.isNaN ? 0 : max(0, interval)
    }
}
