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
/// Nearly every future has one callback (the next stage of a chain, or one observer), so the first
/// is held inline and only the second and later ones go into an array: a future with one callback
/// allocates nothing for it.
///
/// While the future is pending, callbacks are appended. Once it completes they are taken out one
/// at a time, in registration order, and each is released as it is taken, so that what it holds
/// (the next stage, an observer's captures) goes as soon as it has run.
@usableFromInline
struct FutureCallbacks {
    @usableFromInline var first: FutureCallback?
    /// After `first`: in registration order while appending, reversed once taking begins so that
    /// `popLast` takes them in order.
    @usableFromInline var later: [FutureCallback]

    /// No callbacks.
    @inlinable
    init() {
        first = nil
        later = []
    }

    /// Whether there is no callback left.
    @inlinable
    var isEmpty: Bool { first == nil && later.isEmpty }

    /// Adds `callback` after the others. Only before ``takeNext()`` was first called.
    @inlinable
    mutating func append(_ callback: @escaping FutureCallback) {
        if first == nil {
            first = callback
        } else {
            later.append(callback)
        }
    }

    /// Removes and returns the callback registered earliest; `nil` when none is left.
    mutating func takeNext() -> FutureCallback? {
        if let callback = first {
            first = nil
            if !later.isEmpty {
                later.reverse()
            }
            return callback
        }
        return later.popLast()
    }
}
