/// Callbacks that became due when a future completed, waiting to be run.
///
/// Completing a future never calls its callbacks directly. It returns them as a
/// `FutureContinuations`, and whoever completed the future runs them with ``run()``. When a
/// callback completes the next future of a chain (as `map` and `flatMap` do), it returns *that*
/// future's continuations instead of running them, and `run()` continues with them in its own
/// loop. A chain of 100,000 stages is therefore completed by one loop, one stage after another,
/// with constant stack depth.
///
/// The value is a reference to the completed future that holds the due callbacks (see
/// ``FutureDueCallbacks``), so that completing a stage allocates nothing to describe the work.
@usableFromInline
struct FutureContinuations: Sendable {
    @usableFromInline let due: (any FutureDueCallbacks)?

    /// Nothing to run.
    @inlinable
    init() {
        due = nil
    }

    /// The callbacks that `due` holds.
    @inlinable
    init(_ due: any FutureDueCallbacks) {
        self.due = due
    }

    /// Whether there is nothing to run.
    @inlinable
    var isEmpty: Bool { due == nil }

    /// Runs every due callback and every callback they make due, depth first, in a loop.
    ///
    /// Depth first keeps the order a nested call would have had: the callbacks of a future that
    /// a callback completes run before that callback's next sibling.
    @inlinable
    func run() {
        if let due {
            Self.run(from: due)
        }
    }

    /// The loop of ``run()``, starting with the callbacks of `first`.
    @usableFromInline
    static func run(from first: any FutureDueCallbacks) {
        var current = first
        // Futures whose later callbacks wait while an earlier one's descendants run. A chain (one
        // callback per future) never puts anything here, so never allocates it.
        var waiting: [any FutureDueCallbacks] = []
        while true {
            let (produced, more) = current.runNextDue()
            if let next = produced.due {
                if more {
                    waiting.append(current)
                }
                current = next
            } else if !more {
                guard let resumed = waiting.popLast() else { return }
                current = resumed
            }
        }
    }
}

/// A completed future whose callbacks are due.
///
/// Not generic, so that ``FutureContinuations`` can refer to any future without boxing it and the
/// loop in ``FutureContinuations/run()`` needs no type metadata.
@usableFromInline
protocol FutureDueCallbacks: AnyObject, Sendable {
    /// Removes the next due callback and runs it.
    ///
    /// Only the loop that received the future in a ``FutureContinuations`` calls this.
    ///
    /// - Returns: What the callback made due, not yet run, and whether more callbacks of this
    ///   future are still due.
    func runNextDue() -> (produced: FutureContinuations, more: Bool)
}
