// How a future is completed and how its callbacks are registered and run.
//
// What a chain does per stage is `@inlinable`, so that it is specialized for the caller's value
// types: unspecialized generic code looks up type metadata at run time for nearly every copy of a
// `Result<Value, any Error>`, which cost more than all the rest of a stage.

extension Future {
    /// Runs `body` holding the lock that guards this future's state.
    ///
    /// `body` must only read and write this future's state: no other lock, no user code.
    @inlinable
    func withStateLock<R>(_ body: () -> R) -> R {
        SharedLocks.withLock(for: self, body)
    }

    /// The result of `completed`, a `Future<Value>` that has completed: what a ``FutureCallback``
    /// of a `Future<Value>` receives.
    @inlinable
    static func result(of completed: AnyObject) -> Result<Value, any Error> {
        // The cast is checked in debug builds; only a `Future<Value>` calls its callbacks.
        let future = unsafeDowncast(completed, to: Future<Value>.self)
        // No lock: the result was written before any callback could be called, and never changes.
        guard let result = future.storedResult else {
            preconditionFailure("a future's callback ran before the future completed")
        }
        return result
    }

    /// Registers the callback that `makeCallback` returns. If the future is already complete, the
    /// callback runs at once instead, on the caller's thread, and what it made due is returned
    /// without being run, so that the caller decides whether to run it now or hand it to an outer
    /// loop.
    ///
    /// The callback is made where it is used, under the lock, so that the new closure is moved into
    /// the list rather than copied into it: one retain and one release fewer per stage.
    @inlinable
    func whenComplete(_ makeCallback: () -> FutureCallback) -> FutureContinuations {
        if isBornCompleted { return makeCallback()(self) }
        let completed = withStateLock { () -> Bool in
            if state.isSettled { return true }
            callbacks.append(makeCallback())
            return false
        }
        return completed ? makeCallback()(self) : FutureContinuations()
    }

    /// Completes `next` with this future's result once there is one; returns what that made due.
    @inlinable
    func forward(to next: Future<Value>) -> FutureContinuations {
        // A future made complete, as a cache returns, needs no callback and no lock.
        if isBornCompleted, let result = storedResult {
            return next.settle(result)
        }
        return whenComplete {
            { completed in next.settle(Future<Value>.result(of: completed)) }
        }
    }

    /// Completes the future unless it is already complete, and returns the callbacks that are now
    /// due, without running them: no user code runs under the lock or inside this call.
    @inlinable
    func settle(_ result: Result<Value, any Error>) -> FutureContinuations {
        let due = withStateLock { () -> Bool in
            if state.isSettled { return false }
            // A stage's callback took the transform out of the storage before calling this.
            store(result)
            return !callbacks.isEmpty
        }
        guard due else { return FutureContinuations() }
        // From here the callbacks belong to the loop this future is handed to.
        callbacks.prepareToTake()
        return FutureContinuations(self)
    }

    /// Fails the future with ``FutureError/abandoned``: what the release of its ``Completer``, the
    /// only code that completes it, means while it is pending. Apart, so that the release of a
    /// completer whose future completed looks up no type metadata.
    @inline(never)
    private func abandon() -> FutureContinuations {
        settle(.failure(FutureError.abandoned))
    }

    /// Completes the future when called; fails it with ``FutureError/abandoned`` when released
    /// uncalled. The `complete` function handed to a future's body holds the only reference.
    @usableFromInline
    final class Completer: Sendable {
        @usableFromInline let future: Future<Value>

        @inlinable
        init(_ future: Future<Value>) {
            self.future = future
        }

        @inlinable
        func complete(_ result: Result<Value, any Error>) {
            future.settle(result).run()
        }

        deinit {
            // No lock: only a completer completes its future, and this one is being released, so
            // every call it made happened before this read; other threads only read `state`.
            // Nearly always the future completed long ago, and this is all the release costs.
            if future.state.isSettled { return }
            AbandonedFutures.fail(future.abandon())
        }
    }
}

extension Future: FutureDueCallbacks {
    // Never specialized (the loop calls it through the protocol), so it touches only what does not
    // depend on `Value`; the callback reads the result in code specialized where it was created.
    @usableFromInline
    func runNextDue() -> (produced: FutureContinuations, more: Bool) {
        guard let callback = callbacks.takeNext() else { return (FutureContinuations(), false) }
        let more = !callbacks.isEmpty
        return (callback(self), more)
    }
}
