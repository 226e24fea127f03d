import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Counts completions and notes when the last expected one arrived.
///
/// Scenario and baseline of a burst call the same ``completion``, so they pay for the same work
/// per request: one uncontended lock, one increment, and a sink for the signed request.
final class DrainCounter: @unchecked Sendable {
    private let lock = NSLock()
    private let expected: Int
    private var completed = 0
    private var failed = 0
    private var lastAt: UInt64 = 0
    private let done = DispatchSemaphore(value: 0)

    /// Expects `expected` completions.
    init(expected: Int) {
        self.expected = expected
    }

    /// The completion handler to pass to `authorize`, or to call from a baseline.
    var completion: Completion {
        { [self] result in record(result) }
    }

    /// Counts one completion; the last expected one notes the time and wakes the waiter.
    private func record(_ result: Result<URLRequest, any Error>) {
        let failure: Bool
        if case .failure = result { failure = true } else { failure = false }
        blackHole(result)
        let finished = lock.withLock { () -> Bool in
            completed += 1
            if failure { failed += 1 }
            guard completed == expected else { return false }
            lastAt = monotonicNanoseconds()
            return true
        }
        if finished { done.signal() }
    }

    /// Waits for the last completion; returns when it arrived (monotonic nanoseconds), or `nil`
    /// if it did not within `seconds`.
    func waitForLast(seconds: Double) -> UInt64? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        return lock.withLock { lastAt }
    }

    /// How many completions carried an error.
    var failures: Int {
        lock.withLock { failed }
    }
}
