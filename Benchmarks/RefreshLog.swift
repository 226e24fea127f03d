import Foundation
import RefreshQueue

/// What a closure reported about its refreshes through `onEvent`: how long each took, how many
/// requests were held by one and for how long.
final class RefreshLog: @unchecked Sendable {
    private let lock = NSLock()
    private var durations: [Double] = []
    private var waiting: [Int] = []
    private var failures = 0
    private var queued = 0
    private var refreshesAhead = 0
    private var held = 0
    private var holdDurations: [Double] = []

    /// Creates an empty log.
    init() {}

    /// The `onEvent` handler to give the closure.
    var handler: @Sendable (RefreshEvent) -> Void {
        { [self] event in record(event) }
    }

    /// Notes the events about refreshes; ignores the others.
    private func record(_ event: RefreshEvent) {
        switch event {
        case .refreshSucceeded(let duration):
            lock.withLock { durations.append(duration) }
        case .refreshFailed(_, let duration):
            lock.withLock {
                durations.append(duration)
                failures += 1
            }
        case .requestsResumed(let count):
            lock.withLock { waiting.append(count) }
        case .requestWaiting:
            lock.withLock { queued += 1 }
        case .refreshAheadStarted:
            lock.withLock { refreshesAhead += 1 }
        case .refreshHeldRequests(let count, let duration):
            lock.withLock {
                held += count
                holdDurations.append(duration)
            }
        default:
            break
        }
    }

    /// Requests held by a refresh (they waited for it), in all.
    var requestsHeld: Int { lock.withLock { held } }

    /// How long refreshes held requests, in milliseconds: the median and the 99th percentile of
    /// the holds, or zero without holds.
    var holdMilliseconds: (p50: Double, p99: Double) {
        lock.withLock {
            let sorted = holdDurations.sorted()
            guard !sorted.isEmpty else { return (0, 0) }
            // check-apple: 32-bit safe (an index: 0.99 of the count, rounded up, is at most the count)
            let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
            return (sorted[sorted.count / 2] * 1_000, p99 * 1_000)
        }
    }

    /// Figures for the report: refreshes, their median and longest duration, the seconds they
    /// took in all, how many requests waited for one at most, how many requests went through the
    /// closure's queue instead of being signed inline, and how many were held and how long.
    var details: [String: Double] {
        let hold = holdMilliseconds
        return lock.withLock {
            let sorted = durations.sorted()
            let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            return [
                "refreshMillisecondsMedian": median * 1_000,
                "refreshMillisecondsMax": (sorted.last ?? 0) * 1_000,
                "refreshSecondsTotal": durations.reduce(0, +),
                "refreshFailures": Double(failures),
                "refreshesAhead": Double(refreshesAhead),
                "requestsWaitingMax": Double(waiting.max() ?? 0),
                "requestsQueued": Double(queued),
                "requestsHeld": Double(held),
                "holds": Double(holdDurations.count),
                "holdMillisecondsP50": hold.p50,
                "holdMillisecondsP99": hold.p99,
            ]
        }
    }
}
