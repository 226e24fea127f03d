// Reading and writing the ``FutureStorage`` of a future. The rules of who may touch it when are
// stated in `Future`.

extension Future {
    /// Runs `body` with the address of the storage.
    ///
    /// The address is worked out from the object's, never taken with `&storage`: the thread
    /// sanitizer counts every `inout` access as a write, so threads reading a completed future's
    /// result at once (without the lock, as callbacks do) would look like racing writers.
    @inlinable
    @discardableResult
    func withStorage<R>(_ body: (UnsafeMutableRawPointer) -> R) -> R {
        body(Unmanaged.passUnretained(self).toOpaque() + FutureStorage.offset)
    }

    /// Stores `result` in the empty storage and records it in `state`.
    @inlinable
    func store(_ result: Result<Value, any Error>) {
        switch result {
        case .success(let value):
            if FutureStorage.holds(Value.self) {
                withStorage { _ = $0.initializeMemory(as: Value.self, repeating: value, count: 1) }
                // Known here, where `Value` is: `_isPOD` is a constant in specialized code. The
                // deinitializer, never specialized, then skips values with nothing to destroy
                // instead of making two indirect calls to destroy them.
                state = _isPOD(Value.self) ? .trivialValue : .value
            } else {
                let box: AnyObject = FutureValueBox(value)
                withStorage { _ = $0.initializeMemory(as: AnyObject.self, repeating: box, count: 1) }
                state = .boxedValue
            }
        case .failure(let error):
            withStorage { _ = $0.initializeMemory(as: (any Error).self, repeating: error, count: 1) }
            state = .error
        }
    }

    /// The result; `nil` while pending. Read under the lock, or once the future is known to have
    /// completed (the result never changes then).
    @inlinable
    var storedResult: Result<Value, any Error>? {
        switch state {
        case .pending:
            return nil
        case .value, .trivialValue:
            return .success(withStorage { $0.assumingMemoryBound(to: Value.self).pointee })
        case .boxedValue:
            let box = withStorage { $0.assumingMemoryBound(to: AnyObject.self).pointee }
            return .success(unsafeDowncast(box, to: FutureValueBox<Value>.self).value)
        case .error:
            return .failure(withStorage { $0.assumingMemoryBound(to: (any Error).self).pointee })
        }
    }

    /// Stores the transform of the stage that will complete this pending future, before anyone
    /// else can see the future: a ``FutureMapStep`` or a ``FutureFlatMapStep``, a struct of one
    /// closure.
    @inlinable
    func storeStep<Step: FutureStep>(_ step: consuming Step) {
        precondition(
            MemoryLayout<Step>.size == MemoryLayout<FutureErasedStep>.size && FutureStorage.holds(Step.self),
            "a step is one closure, and a closure fits in a future's storage")
        let bytes = Unmanaged.passUnretained(self).toOpaque() + FutureStorage.offset
        bytes.bindMemory(to: Step.self, capacity: 1).initialize(to: step)
        holdsStep = true
    }

    /// Moves out the transform stored by ``storeStep(_:)``, exactly once: the stage's callback
    /// calls this before it completes the future.
    ///
    /// No lock: nothing else reads the storage or `holdsStep` while the future is pending, and the
    /// only writes before this one were made before the future was published.
    @inlinable
    func takeStep<Step: FutureStep>(as type: Step.Type) -> Step {
        holdsStep = false
        return withStorage { $0.assumingMemoryBound(to: Step.self).move() }
    }

    /// Destroys what the storage holds: for the deinitializer, which is not specialized and so must
    /// not name a type built from `Value`.
    @inline(__always)
    func destroyStorage() {
        let state = self.state
        // Nothing to destroy: a value such as an `Int`, or a future released pending whose
        // transform (if it had one) was taken.
        if state == .trivialValue || (state == .pending && !holdsStep) { return }
        withStorage { bytes in
            switch state {
            case .pending:
                // A stage whose callback was released without running still holds its transform:
                // a step struct of one closure, laid out and destroyed as that closure is.
                _ = bytes.bindMemory(to: FutureErasedStep.self, capacity: 1).move()
            case .trivialValue:
                break
            case .value:
                // Moved out and dropped: one call of the value's own destroy, rather than the
                // unspecialized `deinitialize(count:)` and its array loop.
                _ = bytes.assumingMemoryBound(to: Value.self).move()
            case .boxedValue:
                _ = bytes.assumingMemoryBound(to: AnyObject.self).move()
            case .error:
                _ = bytes.assumingMemoryBound(to: (any Error).self).move()
            }
        }
    }
}
