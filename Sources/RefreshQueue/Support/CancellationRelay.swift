/// Passes an operation that has started to a task-cancellation handler, which may run before,
/// while or after the operation starts: whichever of the two comes second cancels it, once.
///
/// `withTaskCancellationHandler` runs its handler at once when the task is already cancelled,
/// and concurrently with the operation otherwise; this is the small state both sides share.
struct CancellationRelay<Operation: Sendable>: Sendable {
    private enum Stage {
        case notStarted
        case started(Operation)
        case cancelled
    }

    private let stage = Locked(Stage.notStarted)

    /// Records `operation` as started. Returns `false` when cancellation came first: the caller
    /// must then cancel `operation` itself.
    func start(_ operation: Operation) -> Bool {
        stage.withLock { stage in
            if case .cancelled = stage { return false }
            stage = .started(operation)
            return true
        }
    }

    /// Records the cancellation; returns the operation to cancel, if one has started.
    func cancel() -> Operation? {
        stage.withLock { stage in
            defer { stage = .cancelled }
            if case .started(let operation) = stage { return operation }
            return nil
        }
    }

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        stage.withLock { stage in
            if case .cancelled = stage { return true }
            return false
        }
    }
}
