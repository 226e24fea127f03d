import Foundation

/// How many refreshes that look like a loop a ``RefreshingRequestClosure`` allows within a
/// sliding time window.
///
/// A server that keeps answering with tokens that are already stale, or that rejects each token
/// it has just issued, or a device clock far off, would otherwise make every request refresh. The
/// window counts only such signs of a loop:
/// - a refresh whose result already needs a refresh (stale on arrival);
/// - a refreshed token that the server rejects (a 401 handed to `reauthorize`) while it does not
///   need a refresh yet; one that expired on its way is no loop;
/// - a refresh the server refused (any failure but a transport error: `URLError`, offline, timed
///   out, DNS, so that a phone that was offline is not locked out once it is back online; a store
///   that cannot be read now, or whose lock another process holds, is no refusal either).
///
/// A refresh whose result already recommends a refresh is no sign, but the next refresh ahead
/// then waits, 1 s and longer after each such result, up to a minute.
///
/// Refreshes that tokens' lifetimes call for, at expiry or ahead of it, are not counted: tokens
/// that live a second keep working. Once the window holds `maximumRefreshes` signs, requests that
/// need a refresh fail with ``RefreshQueueError/excessiveRefresh``, without a refresh, until the
/// oldest leaves the window; ``RefreshEvent/refreshRefused(_:)`` is reported once for each such
/// episode. A refresh ahead never takes the last place.
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
    /// `maximumRefreshes` must be 1 or more and `interval` finite and zero or more; other values
    /// stop the program (see <doc:Errors#Invalid-configuration>).
    public init(maximumRefreshes: Int, interval: TimeInterval) {
        requireValidConfiguration(
            maximumRefreshes >= 1, "RefreshWindow.maximumRefreshes", mustBe: "1 or more", given: "\(maximumRefreshes)")
        requireNonNegativeSeconds(interval, "RefreshWindow.interval")
        self.maximumRefreshes = maximumRefreshes
        self.interval = interval
    }
}
