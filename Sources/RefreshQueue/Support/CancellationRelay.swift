/// Passes an operation that has started to a task-cancellation handler, which may run before,
/// while or after the operation starts: whichever of the two comes second cancels it, once.
///
/// `withTaskCancellationHandler` runs its handler at once when the task is already cancelled,
/// and concurrently with the operation otherwise; this is the small state both sides share. One
/// exists per waiting `async` request, so it has no mutex of its own: ``SharedLocks`` guard it.
final class CancellationRelay<Operation: Sendable>: @unchecked Sendable {
    private enum Stage {
        case notStarted
        case started(Operation)
        case cancelled
    }

    /// Read and written only under `SharedLocks.withLock(for: self)`.
    private var stage = Stage.notStarted

    /// Records `operation` as started. Returns `false` when cancellation came first: the caller
    /// must then cancel `operation` itself.
    func start(_ operation: Operation) -> Bool {
        SharedLocks.withLock(for: self) {
            if case .cancelled = stage { return false }
            stage = .started(operation)
            return true
        }
    }

    /// Records the cancellation; returns the operation to cancel, if one has started.
    func cancel() -> Operation? {
        SharedLocks.withLock(for: self) {
            defer { stage = .cancelled }
            if case .started(let operation) = stage { return operation }
            return nil
        }
    }

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        SharedLocks.withLock(for: self) {
            if case .cancelled = stage { return true }
            return false
        }
    }
}
