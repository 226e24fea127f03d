/// A callback of a future: receives the future once it has completed, and returns the callbacks
/// its run made due, still to be run, so that a chain is driven by one loop instead of by nested
/// calls.
///
/// It receives the future rather than its result so that its type, and everything that stores it,
/// does not depend on the future's `Value`: the loop that runs callbacks is not generic, and a
/// generic type would make it look up type metadata at run time for every step.
@usableFromInline
typealias FutureCallback = @Sendable (_ completed: AnyObject) -> FutureContinuations

/// The callbacks of a future, in the order they were registered.
///
/// Nearly every future has one callback (the next stage of a chain, or one observer), which is held
/// inline; only a second one moves them all into an array, so a future with one callback
/// allocates nothing for it.
///
/// While the future is pending, callbacks are appended. Once it completes they are taken out one
/// at a time, in registration order, and each is released as it is taken, so that what it holds
/// (the next stage, an observer's captures) goes as soon as it has run.
@usableFromInline
enum FutureCallbacks {
    case none
    case one(FutureCallback)
    /// In registration order while appending; reversed by ``prepareToTake()`` so that `popLast`
    /// takes them in order.
    case many([FutureCallback])

    /// Whether there is no callback left.
    @inlinable
    var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }

    /// Adds `callback` after the others. Only before ``prepareToTake()``.
    ///
    /// The callback is taken owned, so that a new one moves in without a retain and a release.
    /// Spelled `__owned`, not `consuming`: Swift 6.3 miscompiles a `consuming` closure parameter
    /// stored in an enum's payload here in unoptimized builds, which then crash.
    @inlinable
    mutating func append(_ callback: __owned @escaping FutureCallback) {
        switch self {
        case .none:
            self = .one(callback)
        case .one(let first):
            self = .many([first, callback])
        case .many(var callbacks):
            self = .none  // so that the array is not shared, and the append does not copy it
            callbacks.append(callback)
            self = .many(callbacks)
        }
    }

    /// Readies the callbacks for ``takeNext()``, once no more can be appended.
    @inlinable
    mutating func prepareToTake() {
        guard case .many(var callbacks) = self else { return }
        self = .none
        callbacks.reverse()
        self = .many(callbacks)
    }

    /// Removes and returns the callback registered earliest; `nil` when none is left.
    mutating func takeNext() -> FutureCallback? {
        switch self {
        case .none:
            return nil
        case .one(let callback):
            self = .none
            return callback
        case .many(var callbacks):
            self = .none
            let callback = callbacks.popLast()
            if !callbacks.isEmpty {
                self = .many(callbacks)
            }
            return callback
        }
    }
}
