import Foundation
import RefreshQueue

/// What a closure reported about its refreshes through `onEvent`: how long each took and how many
/// requests were waiting for it.
final class RefreshLog: @unchecked Sendable {
    private let lock = NSLock()
    private var durations: [Double] = []
    private var waiting: [Int] = []
    private var failures = 0
    private var queued = 0

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
        default:
            break
        }
    }

    /// Figures for the report: refreshes, their median and longest duration, the seconds they
    /// took in all, how many requests waited for one at most, and how many requests went through
    /// the closure's queue instead of being signed inline.
    var details: [String: Double] {
        lock.withLock {
            let sorted = durations.sorted()
            let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            return [
                "refreshMillisecondsMedian": median * 1_000,
                "refreshMillisecondsMax": (sorted.last ?? 0) * 1_000,
                "refreshSecondsTotal": durations.reduce(0, +),
                "refreshFailures": Double(failures),
                "requestsWaitingMax": Double(waiting.max() ?? 0),
                "requestsQueued": Double(queued),
            ]
        }
    }
}
