/// Passes an operation that has started to a task-cancellation handler, which may run before,
/// while or after the operation starts: whichever of the two comes second cancels it, once.
///
/// `withTaskCancellationHandler` runs its handler at once when the task is already cancelled,
/// and concurrently with the operation otherwise; this is the small state both sides share. One
/// exists per waiting `async` request and per transfer, so it has no mutex of its own:
/// ``SharedLocks`` guard it.
///
/// Not generic: a generic class finds the metadata of its stored enum through the runtime's
/// cache each time an instance is destroyed, which cost more than the rest of the relay's work.
final class CancellationRelay: @unchecked Sendable {
    private enum Stage {
        case notStarted
        case started(any RelayedOperation)
        case cancelled
    }

    /// Read and written only under `SharedLocks.withLock(for: self)`.
    private var stage = Stage.notStarted

    /// Records `operation` as started. Returns `false` when cancellation came first: the caller
    /// must then cancel `operation` itself.
    func start(_ operation: some RelayedOperation) -> Bool {
        SharedLocks.withLock(for: self) {
            if case .cancelled = stage { return false }
            stage = .started(operation)
            return true
        }
    }

    /// Records the cancellation; returns the operation to cancel, if one has started.
    func cancel() -> (any RelayedOperation)? {
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

/// What a ``CancellationRelay`` hands to the cancellation handler: something that stops when
/// cancelled.
protocol RelayedOperation: Sendable {
    /// Stops the operation; its own completion then reports how it ended.
    func cancel()
}
