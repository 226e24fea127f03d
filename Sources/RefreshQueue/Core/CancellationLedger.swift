/// What the tasks of requests that waited together share: who keeps those requests, and which of
/// them were cancelled.
///
/// The closure hands the same ledger to every request that starts waiting, and starts a new one
/// after a cancellation is recorded. A ledger therefore records only cancellations of requests
/// that were waiting at once, and it is freed with the last of their tasks.
final class CancellationLedger: @unchecked Sendable {
    /// The closure where the requests wait. Weak: a task kept by the app does not keep the
    /// closure; a waiting request does not need it to, as a running refresh or a scheduled pump
    /// keeps the closure while any request waits.
    private(set) weak var owner: (any TaskCancelling)?

    /// The tickets of the cancelled requests. Read and written only under
    /// `SharedLocks.withLock(for: self)`; the closure records a cancellation under its own lock,
    /// so the two are taken in that order, never the other.
    private var cancelled: Set<UInt64> = []

    init(owner: any TaskCancelling) {
        self.owner = owner
    }

    /// Records that the request with `ticket` was cancelled.
    func record(_ ticket: UInt64) {
        _ = SharedLocks.withLock(for: self) { cancelled.insert(ticket) }
    }

    /// Whether the request with `ticket` was cancelled.
    func wasCancelled(_ ticket: UInt64) -> Bool {
        SharedLocks.withLock(for: self) { cancelled.contains(ticket) }
    }
}
