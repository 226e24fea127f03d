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
/// ## Abandoned futures
/// A future that can never complete fails with ``FutureError/abandoned``, so that nobody waits
/// for it forever: when every copy of the `complete` function of its body is released uncalled,
/// and when the future itself is released while pending. Its observers and later stages then see
/// that error once, on the releasing thread, which may be inside that code's own lock: observe
/// on a queue when that matters.
///
/// ## Threads and stack depth
/// Callbacks registered by `map`, `flatMap` and friends run on the thread that completes the
/// future they wait on. A callback that completes or abandons other futures (the next stage of a
/// chain) does not run their callbacks itself: they run as soon as it returns, those of the
/// futures it abandoned first, then those of the futures it completed, each in order and before
/// the next callback of its own future. So a chain of any length (100,000 stages and more)
/// completes, or fails, without growing the stack.
///
/// `Future` is thread-safe: complete, observe and chain it from any thread.
public final class Future<Value: Sendable>: Sendable {
    /// A registered callback.
    typealias Callback = @Sendable (Result<Value, any Error>) -> Void

    private enum State {
        /// Not completed; the callbacks registered so far, in order.
        case pending([Callback])
        case completed(Result<Value, any Error>)
    }

    private let state: Locked<State>

    /// Creates a future and runs `body` at once, on the caller's thread.
    ///
    /// `body` receives `complete`, which may be called from any thread and at any later time;
    /// the first call completes the future and later calls are ignored. Callbacks registered
    /// before completion run on the thread that calls `complete`. If every copy of `complete` is
    /// released uncalled, the future fails with ``FutureError/abandoned`` at that moment.
    public init(_ body: (_ complete: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void) {
        state = Locked(.pending([]))
        let completer = Completer(self)
        body { result in completer.complete(result) }
    }

    /// Creates a future that is already completed with `value`.
    public init(value: Value) {
        state = Locked(.completed(.success(value)))
    }

    /// Creates a future that is already completed with `error`.
    public init(error: any Error) {
        state = Locked(.completed(.failure(error)))
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

    /// A pending future, completed by ``complete(_:abandoned:)``.
    init(pending: Void) {
        state = Locked(.pending([]))
    }

    deinit {
        // Released pending: nothing can complete it any more.
        let callbacks = state.withLock { state -> [Callback] in
            guard case .pending(let callbacks) = state else { return [] }
            return callbacks
        }
        Self.run(callbacks, with: .failure(FutureError.abandoned), abandoned: true)
    }

    /// Whether the future has been completed (with a value or an error).
    public var isCompleted: Bool { result != nil }

    /// The result, if the future has been completed; `nil` while it is pending.
    public var result: Result<Value, any Error>? {
        state.withLock { state in
            guard case .completed(let result) = state else { return nil }
            return result
        }
    }

    /// Registers `callback`, which runs exactly once with the result.
    ///
    /// Callbacks registered while the future is pending run in the order they were registered
    /// (on a serial `queue`, in that order there).
    ///
    /// - Parameters:
    ///   - queue: Where `callback` runs. When `nil`, it runs on the thread that completes the
    ///     future, or at once on the caller's thread if the future is already complete.
    ///   - callback: Receives the value or the error.
    /// - Returns: This future, so that observers can be chained.
    @discardableResult
    public func observe(
        on queue: DispatchQueue? = nil,
        _ callback: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) -> Future<Value> {
        if let queue {
            whenComplete { result in queue.async { callback(result) } }
        } else {
            whenComplete(callback)
        }
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
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        let next = Future<T>(pending: ())
        whenComplete { result in
            next.complete(result.flatMap { value in Result { try transform(value) } })
        }
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
    public func flatMap<T: Sendable>(_ transform: @escaping @Sendable (Value) -> Future<T>) -> Future<T> {
        let next = Future<T>(pending: ())
        whenComplete { result in
            switch result {
            case .success(let value): transform(value).forward(to: next)
            case .failure(let error): next.complete(.failure(error))
            }
        }
        return next
    }

    /// Transforms the error; a value passes through unchanged.
    ///
    /// ```swift
    /// let typed = refresh.mapError { error in AppError.sessionExpired(underlying: error) }
    /// ```
    public func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { result in next.complete(result.mapError { transform($0) }) }
        return next
    }

    /// Turns an error into a value; a thrown error fails the new future instead.
    ///
    /// ```swift
    /// let nameOrGuest = api.userName().recover { _ in "guest" }
    /// ```
    public func recover(_ transform: @escaping @Sendable (any Error) throws -> Value) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { result in
            switch result {
            case .success: next.complete(result)
            case .failure(let error): next.complete(Result { try transform(error) })
            }
        }
        return next
    }

    /// Continues after an error with another asynchronous step; a value passes through unchanged.
    ///
    /// ```swift
    /// let token = cache.token().flatMapError { _ in tokenClient.fetchToken() }
    /// ```
    public func flatMapError(_ transform: @escaping @Sendable (any Error) -> Future<Value>) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { result in
            switch result {
            case .success: next.complete(result)
            case .failure(let error): transform(error).forward(to: next)
            }
        }
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
        forward(to: next)
        if !next.isCompleted {
            // Weak: while `next` is pending, this future holds it, and this future is kept by
            // whatever will complete it; once it completes or is abandoned, so is `next`. A strong
            // reference would keep `next` and its result until the timer fires.
            queue.asyncAfter(deadline: DispatchTime.after(seconds: seconds)) { [weak next] in
                next?.complete(.failure(error))
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
            future.whenComplete { result in
                switch result {
                case .failure(let error):
                    combined.complete(.failure(error))
                case .success(let value):
                    if let values = collected.withLock({ $0.store(value, at: index) }) {
                        combined.complete(.success(values))
                    }
                }
            }
        }
        return combined
    }

    // MARK: - Completion

    /// Completes the future with `result` unless it is complete already, then runs its callbacks
    /// (see ``FutureCallbackLoop``). `abandoned` says that nothing else could complete it.
    func complete(_ result: Result<Value, any Error>, abandoned: Bool = false) {
        let callbacks = state.withLock { state -> [Callback]? in
            guard case .pending(let callbacks) = state else { return nil }
            state = .completed(result)
            return callbacks
        }
        if let callbacks { Self.run(callbacks, with: result, abandoned: abandoned) }
    }

    /// Registers `callback`, or runs it at once on this thread if the future is complete.
    private func whenComplete(_ callback: @escaping Callback) {
        let completed = state.withLock { state -> Result<Value, any Error>? in
            switch state {
            case .completed(let result):
                return result
            case .pending(var callbacks):
                state = .pending([])  // so that the array is not copied to append
                callbacks.append(callback)
                state = .pending(callbacks)
                return nil
            }
        }
        if let completed { callback(completed) }
    }

    /// Completes `next` with this future's result once there is one.
    private func forward(to next: Future<Value>) {
        whenComplete { result in next.complete(result) }
    }

    private static func run(_ callbacks: [Callback], with result: Result<Value, any Error>, abandoned: Bool) {
        FutureCallbackLoop.run(callbacks.map { callback in { callback(result) } }, abandoned: abandoned)
    }

    /// Completes the future when called; fails it with ``FutureError/abandoned`` when released
    /// uncalled. The `complete` function handed to a future's body holds the only reference.
    private final class Completer: Sendable {
        let future: Future<Value>

        init(_ future: Future<Value>) {
            self.future = future
        }

        func complete(_ result: Result<Value, any Error>) {
            future.complete(result)
        }

        deinit {
            future.complete(.failure(FutureError.abandoned), abandoned: true)
        }
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
