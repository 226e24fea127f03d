import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

@Suite("Future timeout edges and error text", .timeLimit(.minutes(5)))
struct FutureTimeoutAndErrorTests {
    typealias Complete<T> = @Sendable (Result<T, any Error>) -> Void

    @Test func aTimeoutOfZeroNaNOrMinusInfinityTimesOutAtOnceAsNegativeValuesDo() async {
        let kept = Protected<Complete<Int>?>(nil)
        let never = Future<Int> { complete in kept.withLock { $0 = complete } }
        let outcomes = Completions<Bool>()
        let timeouts = [-1, -TimeInterval.infinity, 0, .nan]
        for (index, seconds) in timeouts.enumerated() {
            never.timeout(after: seconds).observe { result in
                guard case .failure(let error) = result else { return outcomes.record(index, false) }
                outcomes.record(index, (error as? FutureError) == .timedOut)
            }
        }
        await outcomes.wait(for: timeouts.count, timeout: 30)
        #expect(outcomes.results.count == timeouts.count && outcomes.results.values.allSatisfy { $0 })
        // The source stays pending throughout: its work is still held.
        #expect(kept.current != nil && never.result == nil)
    }

    @Test func aTimedFutureThatCompletedInTimeIsReleasedWithItsValueBeforeItsTimerFires() {
        let released = Protected(0)
        weak var weakTimed: Future<Counted>?
        do {
            let kept = Protected<Complete<Counted>?>(nil)
            let source = Future<Counted> { complete in kept.withLock { $0 = complete } }
            let timed = source.timeout(after: 3600)
            weakTimed = timed
            let complete = kept.withLock { complete in
                defer { complete = nil }
                return complete
            }
            complete?(.success(Counted(released)))
            #expect(timed.result != nil)
        }
        // Nobody holds the source or the timed future any more: an hour-long timer must not keep
        // the timed future, and the value in it, alive until it fires.
        #expect(weakTimed == nil)
        #expect(released.current == 1)
    }

    @Test func anAbandonedRefreshIsDescribedByTheTextOfFutureError() {
        let failed = RefreshQueueError.refreshFailed(FutureError.abandoned)
        #expect(failed.description.contains(FutureError.abandoned.description))
        let timedOut = RefreshQueueError.refreshFailed(FutureError.timedOut)
        #expect(timedOut.description.contains(FutureError.timedOut.description))
    }
}

/// Counts its releases.
private final class Counted: Sendable {
    private let released: Protected<Int>

    init(_ released: Protected<Int>) {
        self.released = released
    }

    deinit {
        released.withLock { $0 += 1 }
    }
}
