/// Which waiters of a group handed out to be answered have been taken, by the deliverer (to
/// call their completion with the answer) or by a cancellation (to complete them with
/// ``RefreshQueueError/cancelled`` at once): each is taken once, by one of the two.
///
/// A group is answered one completion after another, and a completion may be slow, so a waiter
/// can wait a long time after it left the line; until its completion is called, cancelling it
/// must still complete it at once. One record per group, not per waiter: a waiting request costs
/// no allocation of its own.
final class DeliveryClaims: @unchecked Sendable {
    /// The waiters taken, one bit each, for a group of up to 64 (no array to allocate).
    private var small: UInt64 = 0
    /// The waiters taken, for a larger group.
    private var large: [Bool]
    // Both read and written only under `SharedLocks.withLock(for: self)`. A cancellation takes
    // that lock inside the closure's own lock; nothing takes them in the other order.

    init(count: Int) {
        large = count > 64 ? [Bool](repeating: false, count: count) : []
    }

    /// Takes the waiter at `index` of the group; `false` when it was taken already.
    func take(_ index: Int) -> Bool {
        SharedLocks.withLock(for: self) {
            if large.isEmpty {
                let bit = UInt64(1) << UInt64(index)
                if small & bit != 0 { return false }
                small |= bit
                return true
            }
            if large[index] { return false }
            large[index] = true
            return true
        }
    }

    /// Whether the waiter at `index` has been taken.
    func isTaken(_ index: Int) -> Bool {
        SharedLocks.withLock(for: self) {
            large.isEmpty ? small & (UInt64(1) << UInt64(index)) != 0 : large[index]
        }
    }
}
