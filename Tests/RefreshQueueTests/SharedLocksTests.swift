import Dispatch
import Testing

@testable import RefreshQueue

/// The pool of locks that futures and the other small objects share: mutual exclusion, also when
/// many threads wait for the same lock, and a lock freed when its body throws.
@Suite("Shared locks", .timeLimit(.minutes(2)))
struct SharedLocksTests {
    /// A counter that is only safe under the shared lock of the object it is.
    private final class Counter: @unchecked Sendable {
        var value = 0
        private var inside = 0
        private(set) var overlaps = 0

        /// Counts one, slowly: long enough that two threads let in together would overlap, and
        /// each would see the other inside.
        func countSlowly() {
            inside += 1
            if inside != 1 { overlaps += 1 }
            var spin = 0
            for step in 0..<200 { spin &+= step ^ value }
            value += 1 &+ (spin & 0)
            inside -= 1
        }
    }

    private struct Planted: Error {}

    /// `count` counters that share one lock, and `count` that each have a lock of their own
    /// among them: two objects pick the same lock when their addresses say so.
    private static func counters(sharingOneLock count: Int) -> [Counter] {
        var picked: [Counter] = []
        var kept: [Counter] = []  // alive until all are picked, so that no address is reused
        let first = Counter()
        picked.append(first)
        while picked.count < count {
            let candidate = Counter()
            if SharedLocks.index(of: candidate) == SharedLocks.index(of: first) {
                picked.append(candidate)
            } else {
                kept.append(candidate)
            }
        }
        withExtendedLifetime(kept) {}
        return picked
    }

    @Test func threadsIncrementingUnderOneLockLoseNoIncrement() {
        let counters = Self.counters(sharingOneLock: 4)
        let threads = 8
        let rounds = 5_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                let counter = counters[(thread + round) % counters.count]
                SharedLocks.withLock(for: counter) { counter.countSlowly() }
            }
        }
        #expect(counters.allSatisfy { counter in SharedLocks.withLock(for: counter) { counter.overlaps } == 0 })
        let totals = counters.map { counter in SharedLocks.withLock(for: counter) { counter.value } }
        #expect(totals == [Int](repeating: threads * rounds / counters.count, count: counters.count))
    }

    @Test func aBodyThatThrowsLeavesTheLockFree() {
        let counter = Counter()
        #expect(throws: Planted.self) {
            try SharedLocks.withLock(for: counter) { throw Planted() }
        }
        // Taken again from another thread: a lock left held would make this wait forever, and
        // the suite's time limit would fail it.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            SharedLocks.withLock(for: counter) { counter.value = 1 }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(SharedLocks.withLock(for: counter) { counter.value } == 1)
    }

    @Test func everyLockIsTakenAndFreedInTurn() {
        // One object per lock of the pool, each locked from several threads at once: the pool's
        // 64 locks are all set up and independent.
        var byLock: [Int: Counter] = [:]
        var kept: [Counter] = []
        while byLock.count < SharedLocks.count {
            let candidate = Counter()
            kept.append(candidate)
            byLock[SharedLocks.index(of: candidate)] = byLock[SharedLocks.index(of: candidate)] ?? candidate
        }
        withExtendedLifetime(kept) {}
        let counters = Array(byLock.values)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 {
                for counter in counters {
                    SharedLocks.withLock(for: counter) { counter.value += 1 }
                }
            }
        }
        #expect(counters.allSatisfy { counter in SharedLocks.withLock(for: counter) { counter.value } == 4_000 })
    }
}
