import Dispatch
import Foundation

/// A value that will be available later, or an error: RefreshQueue's replacement for RxSwift's `Single`.
///
/// A future is *eager*: the body you give to ``init(_:)`` runs at once, on the caller's thread, and
/// receives a `complete` function. Call `complete` exactly when the work is done, from any thread.
/// A future is completed **at most once**: the first call to `complete` wins, later calls are ignored.
///
/// ```swift
/// func fetchToken() -> Future<Token> {
///     Future { complete in
///         tokenClient.send(request) { result in complete(result) }
///     }
/// }
/// ```
///
/// ## Observing
/// ``observe(on:_:)`` registers a callback that runs **exactly once** with the result:
/// - on the `queue` you pass, if you pass one;
/// - otherwise on the thread that completes the future;
/// - or at once, on your own thread, if the future is already complete.
///
/// ## `map` versus `flatMap`
/// Use ``map(_:)`` when the next step is an ordinary, synchronous function of the value, and
/// ``flatMap(_:)`` when the next step is itself asynchronous and returns another future:
///
/// ```swift
/// let header: Future<String> = fetchToken().map { token in "Bearer \(token.value)" }
/// let profile: Future<Profile> = fetchToken().flatMap { token in api.profile(using: token) }
/// ```
///
/// Errors skip every `map` and `flatMap` stage until a ``recover(_:)``, ``flatMapError(_:)`` or
/// ``mapError(_:)`` stage, or an observer, sees them.
///
/// ## Threads and stack depth
/// Callbacks registered by `map`, `flatMap` and friends run on the thread that completes the
/// future they wait on. They are run from a list in a loop rather than by nested calls, so a chain
/// of any length (100,000 stages and more) completes without growing the stack.
///
/// `Future` is thread-safe: complete, observe and chain it from any thread.
public final class Future<Value: Sendable>: @unchecked Sendable {
    // The state lives in the future itself and is guarded by `SharedLocks.withLock(for: self)`
    // (see `withStateLock`): a chain creates a future per stage, and a mutex of its own would cost
    // an allocation larger than the future. No property's type depends on `Value`, so that the
    // code which is not specialized for `Value` (the loop that runs callbacks, the deinitializers)
    // needs no type metadata looked up at run time. In this order the future of a small value
    // fits a 64-byte allocator block.
    //
    // Exclusivity is not checked at run time: the lock, or ownership by the one loop running the
    // callbacks, already makes every access exclusive, and each check would cost a thread-local
    // lookup on every access, several per stage of a chain.

    /// The result once completed, as `state` says (guarded). It is written once, and never again:
    /// code that has seen the future completed under the lock, or that runs one of its callbacks,
    /// may read it without the lock. While pending, it may hold the transform of the stage that
    /// will complete the future, which only that stage's callback reads (see `holdsStep`).
    ///
    /// The first property, as ``FutureStorage/offset`` requires; only used through its address.
    @exclusivity(unchecked) @usableFromInline var storage: FutureStorage

    /// While pending, the callbacks registered so far (guarded). Once completed, those not yet run:
    /// they belong to the one loop that the completing call handed this future to (see
    /// ``runNextDue()``), and nothing else touches them.
    @exclusivity(unchecked) @usableFromInline var callbacks: FutureCallbacks

    /// What `storage` holds (guarded).
    @exclusivity(unchecked) @usableFromInline var state: FutureState

    /// Whether `storage` holds a stage's transform. Not guarded: written when the future is made,
    /// before anyone else sees it, and when the stage's callback takes the transform; read by the
    /// deinitializer.
    @exclusivity(unchecked) @usableFromInline var holdsStep: Bool

    /// Whether the future was made complete (``init(value:)``, ``init(error:)``): its state never
    /// changes, so it is read without the lock.
    @usableFromInline let isBornCompleted: Bool

    /// Creates a future and runs `body` at once, on the caller's thread.
    ///
    /// `body` receives `complete`, which may be called from any thread and at any later time;
    /// the first call completes the future and later calls are ignored. Callbacks registered
    /// before completion run on the thread that calls `complete`.
    ///
    /// If every copy of `complete` is released without having been called, the work that held it
    /// was dropped and the future can never complete: it fails at that moment with
    /// ``FutureError/abandoned``, so that nobody waits for it forever. When that moment falls
    /// inside a callback without a queue that is itself being told another future was abandoned,
    /// this one's callbacks run on the same thread just after that callback returns: abandoned
    /// chains of any length fail without growing the stack. Inside a callback observed on a
    /// queue, they run at once.
    @inlinable
    public init(_ body: (_ complete: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void) {
        storage = FutureStorage()
        callbacks = .none
        state = .pending
        holdsStep = false
        isBornCompleted = false
        let completer = Completer(self)
        body { result in completer.complete(result) }
    }

    /// Creates a future that is already completed with `value`.
    @inlinable
    public init(value: Value) {
        storage = FutureStorage()
        callbacks = .none
        state = .pending
        holdsStep = false
        isBornCompleted = true
        store(.success(value))
    }

    /// Creates a future that is already completed with `error`.
    @inlinable
    public init(error: any Error) {
        storage = FutureStorage()
        callbacks = .none
        state = .pending
        holdsStep = false
        isBornCompleted = true
        store(.failure(error))
    }

    /// Creates a future completed by an `async` operation, bridging async/await into futures.
    ///
    /// The operation starts at once in a new unstructured `Task`; the future completes with what it
    /// returns or throws. The future does not cancel the task: it has no way to be cancelled.
    ///
    /// ```swift
    /// let token = Future { try await client.refreshToken() }
    /// ```
    public convenience init(operation: @escaping @Sendable () async throws -> Value) {
        self.init { complete in
            Task {
                do {
                    complete(.success(try await operation()))
                } catch {
                    complete(.failure(error))
                }
            }
        }
    }

    /// A pending future, completed by `settle`.
    @inlinable
    init(pending: Void) {
        storage = FutureStorage()
        callbacks = .none
        state = .pending
        holdsStep = false
        isBornCompleted = false
    }

    /// A pending future that holds `step`, the transform of the stage that will complete it.
    @inlinable
    init<Step: FutureStep>(step: consuming Step) {
        storage = FutureStorage()
        callbacks = .none
        state = .pending
        holdsStep = false
        isBornCompleted = false
        storeStep(step)
    }

    /// A future already failed with ``FutureError/abandoned`` whose `callbacks` are due: it stands
    /// in for a future released while pending, which cannot hold them while they run.
    private init(abandoning callbacks: FutureCallbacks) {
        storage = FutureStorage()
        self.callbacks = callbacks
        state = .pending
        holdsStep = false
        isBornCompleted = false
        withStorage { _ = $0.initializeMemory(as: (any Error).self, repeating: FutureError.abandoned, count: 1) }
        state = .error
        self.callbacks.prepareToTake()
    }

    deinit {
        // Released before it completed: nothing can complete it any more. Its observers (and the
        // next stages of its chain, which they hold) hear that once, with a failure, from a loop
        // that runs one stage at a time, so that neither a long chain nor nested releases grow
        // the stack.
        //
        // No lock: every other access ran while its caller held a reference, and the runtime
        // orders the release of each reference before the deinitializer of the last one (a
        // release decrement, then an acquire fence before deinit). The thread sanitizer ignores
        // the accesses of deinitializers for that reason.
        if !state.isSettled, !callbacks.isEmpty {
            let standIn = Future(abandoning: callbacks)
            callbacks = .none
            AbandonedFutures.fail(FutureContinuations(standIn))
        }
        destroyStorage()
    }

    /// Whether the future has been completed (with a value or an error).
    @inlinable
    public var isCompleted: Bool {
        if isBornCompleted { return true }
        return withStateLock { state.isSettled }
    }

    /// The result, if the future has been completed; `nil` while it is pending.
    @inlinable
    public var result: Result<Value, any Error>? {
        if isBornCompleted { return storedResult }
        return withStateLock { storedResult }
    }

    /// Registers `callback`, which runs exactly once with the result.
    ///
    /// Callbacks registered while the future is pending run in the order they were registered
    /// (on a serial `queue`, in that order there). One registered while the future is being
    /// completed on another thread may run before them, also on the same serial queue: to
    /// sequence two steps, chain them (``map(_:)``, ``flatMap(_:)``) instead. So may one
    /// registered, on the thread that abandoned the future, inside the callback whose return its
    /// failure waits for (see ``init(_:)``): the future has failed already, so it runs at once.
    ///
    /// - Parameters:
    ///   - queue: Where `callback` runs. When `nil`, it runs on the thread that completes the
    ///     future, or at once on the caller's thread if the future is already complete.
    ///   - callback: Receives the value or the error.
    /// - Returns: This future, so that observers can be chained.
    @inlinable
    @discardableResult
    public func observe(
        on queue: DispatchQueue? = nil,
        _ callback: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) -> Future<Value> {
        whenComplete {
            { completed in
                let result = Future<Value>.result(of: completed)
                if let queue {
                    queue.async { callback(result) }
                } else {
                    callback(result)
                }
                return FutureContinuations()
            }
        }.run()
        return self
    }

    /// Transforms the value with a synchronous function; a thrown error fails the new future.
    ///
    /// `transform` runs on the thread that completes this future, or at once, on your thread, if
    /// it is complete already. An error of this future skips `transform` and fails the new one.
    ///
    /// ```swift
    /// let bearer = tokenFuture.map { token in "Bearer \(token.accessToken)" }
    /// ```
    @inlinable
    public func map<T: Sendable>(_ transform: consuming @escaping @Sendable (Value) throws -> T) -> Future<T> {
        let next = Future<T>(step: FutureMapStep(transform))
        // Captures `next` alone, which the closure then uses as its context: nothing is allocated.
        whenComplete {
            { completed in
                let transform = next.takeStep(as: FutureMapStep<Value, T>.self).transform
                switch Future<Value>.result(of: completed) {
                case .success(let value):
                    do {
                        return next.settle(.success(try transform(value)))
                    } catch {
                        return next.settle(.failure(error))
                    }
                case .failure(let error):
                    return next.settle(.failure(error))
                }
            }
        }.run()
        return next
    }

    /// Continues with another asynchronous step that returns a future.
    ///
    /// Use `flatMap` rather than ``map(_:)`` when `transform` itself returns a `Future`: the new
    /// future completes when the returned one does, instead of holding a `Future<Future<T>>`.
    ///
    /// ```swift
    /// let profile = authentication.refresh().flatMap { fresh in api.profile(token: fresh.accessToken) }
    /// ```
    @inlinable
    public func flatMap<T: Sendable>(_ transform: consuming @escaping @Sendable (Value) -> Future<T>) -> Future<T> {
        let next = Future<T>(step: FutureFlatMapStep(transform))
        whenComplete {
            { completed in
                let transform = next.takeStep(as: FutureFlatMapStep<Value, T>.self).transform
                switch Future<Value>.result(of: completed) {
                case .success(let value):
                    return transform(value).forward(to: next)
                case .failure(let error):
                    return next.settle(.failure(error))
                }
            }
        }.run()
        return next
    }

    /// Transforms the error; a value passes through unchanged.
    ///
    /// ```swift
    /// let typed = refresh.mapError { error in AppError.sessionExpired(underlying: error) }
    /// ```
    @inlinable
    public func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete {
            { completed in
                next.settle(Future<Value>.result(of: completed).mapError { transform($0) })
            }
        }.run()
        return next
    }

    /// Turns an error into a value; a thrown error fails the new future instead.
    ///
    /// ```swift
    /// let nameOrGuest = api.userName().recover { _ in "guest" }
    /// ```
    @inlinable
    public func recover(_ transform: @escaping @Sendable (any Error) throws -> Value) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete {
            { completed in
                let result = Future<Value>.result(of: completed)
                switch result {
                case .success:
                    return next.settle(result)
                case .failure(let error):
                    do {
                        return next.settle(.success(try transform(error)))
                    } catch {
                        return next.settle(.failure(error))
                    }
                }
            }
        }.run()
        return next
    }

    /// Continues after an error with another asynchronous step; a value passes through unchanged.
    ///
    /// ```swift
    /// let token = cache.token().flatMapError { _ in tokenClient.fetchToken() }
    /// ```
    @inlinable
    public func flatMapError(_ transform: @escaping @Sendable (any Error) -> Future<Value>) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete {
            { completed in
                let result = Future<Value>.result(of: completed)
                switch result {
                case .success:
                    return next.settle(result)
                case .failure(let error):
                    return transform(error).forward(to: next)
                }
            }
        }.run()
        return next
    }

    /// A future that fails with `error` if this one has not completed after `seconds`.
    ///
    /// This future itself is not cancelled and may still complete later; observers of this future
    /// still see that result. Only the returned future is bounded in time.
    ///
    /// When this future is abandoned (see ``FutureError/abandoned``) before time runs out, the
    /// returned future fails at once with ``FutureError/abandoned`` rather than with `error`: it is
    /// known then that no result will come, and waiting would only delay the caller.
    ///
    /// - Parameters:
    ///   - seconds: How long to wait. Zero, negative or NaN values time out as soon as `queue`
    ///     runs the timer, unless this future completes first.
    ///   - queue: Where the timer runs; the timed-out completion happens there.
    ///   - error: The error the returned future fails with when time runs out.
    public func timeout(
        after seconds: TimeInterval,
        on queue: DispatchQueue = .global(),
        error: any Error = FutureError.timedOut
    ) -> Future<Value> {
        let next = Future<Value>(pending: ())
        forward(to: next).run()
        if !next.isCompleted {
            // Weak: while `next` is pending, this future holds it (the callback `forward` added),
            // and this future is kept by whatever will complete it; when it completes or is
            // abandoned, so is `next`, and the timer has nothing left to do. A strong reference
            // would keep `next` and its result until the timer fires: an hour, or forever for an
            // infinite timeout.
            queue.asyncAfter(deadline: DispatchTime.after(seconds: seconds)) { [weak next] in
                next?.settle(.failure(error)).run()
            }
        }
        return next
    }

    /// The value, awaited: bridges a future into async/await.
    ///
    /// Throws the future's error. Waiting does not cancel the future's work; if the awaiting task is
    /// cancelled, this still waits for the result.
    public var value: Value {
        get async throws {
            if let result { return try result.get() }
            return try await withCheckedThrowingContinuation { continuation in
                observe { continuation.resume(with: $0) }
            }
        }
    }

    /// A future that succeeds with every value, in order, once all of `futures` succeed, or fails
    /// with the first error as soon as one fails. An empty list succeeds at once with `[]`.
    public static func all(_ futures: [Future<Value>]) -> Future<[Value]> {
        if futures.isEmpty { return Future<[Value]>(value: []) }
        let collected = Locked(CollectedValues<Value>(count: futures.count))
        let combined = Future<[Value]>(pending: ())
        for (index, future) in futures.enumerated() {
            future.whenComplete {
                { completed in
                    switch Future<Value>.result(of: completed) {
                    case .failure(let error):
                        return combined.settle(.failure(error))
                    case .success(let value):
                        let values = collected.withLock { $0.store(value, at: index) }
                        guard let values else { return FutureContinuations() }
                        return combined.settle(.success(values))
                    }
                }
            }.run()
        }
        return combined
    }
}

/// Values of ``Future/all(_:)`` collected so far.
private struct CollectedValues<Value> {
    private var values: [Value?]
    private var remaining: Int

    init(count: Int) {
        values = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Stores one value; returns all of them once the last one has arrived.
    mutating func store(_ value: Value, at index: Int) -> [Value]? {
        guard values[index] == nil else { return nil }
        values[index] = value
        remaining -= 1
        guard remaining == 0 else { return nil }
        return values.compactMap { $0 }
    }
}
