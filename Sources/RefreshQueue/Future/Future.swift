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
    /// What a callback receives: the result of this future.
    typealias Callback = @Sendable (Result<Value, any Error>) -> FutureContinuations

    private enum State {
        case pending([Callback])
        case completed(Result<Value, any Error>)
    }

    private let state: Locked<State>

    /// Creates a future and runs `body` at once, on the caller's thread.
    ///
    /// `body` receives `complete`, which may be called from any thread and at any later time;
    /// the first call completes the future and later calls are ignored. Callbacks registered
    /// before completion run on the thread that calls `complete`.
    ///
    /// If every copy of `complete` is released without having been called, the work that held it
    /// was dropped and the future can never complete: it fails at that moment with
    /// ``FutureAbandonedError``, so that nobody waits for it forever.
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

    /// Whether the future has been completed (with a value or an error).
    public var isCompleted: Bool {
        state.withLock { state in
            if case .completed = state { return true }
            return false
        }
    }

    /// The result, if the future has been completed; `nil` while it is pending.
    public var result: Result<Value, any Error>? {
        state.withLock { state in
            if case .completed(let result) = state { return result }
            return nil
        }
    }

    /// Registers `callback`, which runs exactly once with the result.
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
        whenComplete { result in
            if let queue {
                queue.async { callback(result) }
            } else {
                callback(result)
            }
            return FutureContinuations()
        }.run()
        return self
    }

    /// Transforms the value with a synchronous function; a thrown error fails the new future.
    ///
    /// `transform` runs on the thread that completes this future. An error of this future skips
    /// `transform` and fails the new one.
    ///
    /// ```swift
    /// let bearer = tokenFuture.map { token in "Bearer \(token.accessToken)" }
    /// ```
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Value) throws -> T) -> Future<T> {
        let next = Future<T>(pending: ())
        whenComplete { result in
            switch result {
            case .success(let value):
                do {
                    return next.settle(.success(try transform(value)))
                } catch {
                    return next.settle(.failure(error))
                }
            case .failure(let error):
                return next.settle(.failure(error))
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
    public func flatMap<T: Sendable>(_ transform: @escaping @Sendable (Value) -> Future<T>) -> Future<T> {
        let next = Future<T>(pending: ())
        whenComplete { result in
            switch result {
            case .success(let value):
                return transform(value).whenComplete { next.settle($0) }
            case .failure(let error):
                return next.settle(.failure(error))
            }
        }.run()
        return next
    }

    /// Transforms the error; a value passes through unchanged.
    ///
    /// ```swift
    /// let typed = refresh.mapError { error in AppError.sessionExpired(underlying: error) }
    /// ```
    public func mapError(_ transform: @escaping @Sendable (any Error) -> any Error) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { result in
            next.settle(result.mapError { transform($0) })
        }.run()
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
            case .success:
                return next.settle(result)
            case .failure(let error):
                do {
                    return next.settle(.success(try transform(error)))
                } catch {
                    return next.settle(.failure(error))
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
    public func flatMapError(_ transform: @escaping @Sendable (any Error) -> Future<Value>) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { result in
            switch result {
            case .success:
                return next.settle(result)
            case .failure(let error):
                return transform(error).whenComplete { next.settle($0) }
            }
        }.run()
        return next
    }

    /// A future that fails with `error` if this one has not completed after `seconds`.
    ///
    /// This future itself is not cancelled and may still complete later; observers of this future
    /// still see that result. Only the returned future is bounded in time.
    ///
    /// When this future is abandoned (see ``FutureAbandonedError``) before time runs out, the
    /// returned future fails at once with ``FutureAbandonedError`` rather than with `error`: it is
    /// known then that no result will come, and waiting would only delay the caller.
    ///
    /// - Parameters:
    ///   - seconds: How long to wait. Zero, negative or NaN values time out at once.
    ///   - queue: Where the timer runs; the timed-out completion happens there.
    ///   - error: The error the returned future fails with when time runs out.
    public func timeout(
        after seconds: TimeInterval,
        on queue: DispatchQueue = .global(),
        error: any Error = FutureTimeoutError()
    ) -> Future<Value> {
        let next = Future<Value>(pending: ())
        whenComplete { next.settle($0) }.run()
        if !next.isCompleted {
            // Strong: an observer may be all that wants the result, and observers do not keep a
            // future alive; the timer lets go of it when it fires.
            queue.asyncAfter(deadline: DispatchTime.after(seconds: seconds)) {
                next.settle(.failure(error)).run()
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
                    return combined.settle(.failure(error))
                case .success(let value):
                    let values = collected.withLock { $0.store(value, at: index) }
                    guard let values else { return FutureContinuations() }
                    return combined.settle(.success(values))
                }
            }.run()
        }
        return combined
    }

    // MARK: - Internals

    /// A pending future, completed by `settle`.
    private init(pending: Void) {
        state = Locked(.pending([]))
    }

    deinit {
        // Released before it completed: nothing can complete it any more. Its observers (and the
        // next stages of its chain, which they hold) hear that once, with a failure, from a loop
        // that runs one stage at a time, so that neither a long chain nor nested releases grow
        // the stack.
        let callbacks = state.withLock { state -> [Callback] in
            guard case .pending(let callbacks) = state, !callbacks.isEmpty else { return [] }
            state = .pending([])
            return callbacks
        }
        if !callbacks.isEmpty {
            AbandonedFutures.fail(Self.failing(callbacks))
        }
    }

    /// The steps that call `callbacks` with ``FutureAbandonedError``.
    private static func failing(_ callbacks: [Callback]) -> FutureContinuations {
        let result = Result<Value, any Error>.failure(FutureAbandonedError())
        return FutureContinuations(callbacks.map { callback -> FutureContinuations.Step in { callback(result) } })
    }

    /// Completes the future when called; fails it with ``FutureAbandonedError`` when released
    /// uncalled. The `complete` function handed to a future's body holds the only reference.
    private final class Completer: Sendable {
        private let future: Future<Value>

        init(_ future: Future<Value>) {
            self.future = future
        }

        func complete(_ result: Result<Value, any Error>) {
            future.settle(result).run()
        }

        deinit {
            AbandonedFutures.fail(future.settle(.failure(FutureAbandonedError())))
        }
    }

    /// Registers `callback`. If the future is already complete, the callback is not run here but
    /// returned, so the caller decides whether to run it now or hand it to an outer loop.
    func whenComplete(_ callback: @escaping Callback) -> FutureContinuations {
        let completed: Result<Value, any Error>? = state.withLock { state in
            switch state {
            case .pending(var callbacks):
                state = .pending([])  // drop the reference so the append below does not copy
                callbacks.append(callback)
                state = .pending(callbacks)
                return nil
            case .completed(let result):
                return result
            }
        }
        guard let completed else { return FutureContinuations() }
        return FutureContinuations { callback(completed) }
    }

    /// Completes the future unless it is already complete, and returns the callbacks that are now
    /// due, without running them: no user code runs under the lock or inside this call.
    func settle(_ result: Result<Value, any Error>) -> FutureContinuations {
        let callbacks: [Callback]? = state.withLock { state in
            guard case .pending(let callbacks) = state else { return nil }
            state = .completed(result)
            return callbacks
        }
        guard let callbacks, !callbacks.isEmpty else { return FutureContinuations() }
        if callbacks.count == 1 {
            let callback = callbacks[0]
            return FutureContinuations { callback(result) }
        }
        return FutureContinuations(
            callbacks.map { callback -> FutureContinuations.Step in { callback(result) } })
    }
}

/// The error of a future returned by ``Future/timeout(after:on:error:)`` when time ran out.
public struct FutureTimeoutError: Error, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// A sentence for people.
    public var description: String { "The operation did not complete in time." }
}

/// The error of a future that was abandoned: the work that would have completed it was released
/// first, so it can never complete.
///
/// A future fails with it when every copy of the `complete` function given to its body is
/// released uncalled, and when the future itself is released while still pending; its observers
/// and later stages then see this error, once, on the thread that released it.
public struct FutureAbandonedError: Error, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// A sentence for people.
    public var description: String { "The operation was abandoned before it completed." }
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

extension DispatchTime {
    /// `now + seconds`, treating negative, NaN and enormous intervals sensibly.
    static func after(seconds: TimeInterval) -> DispatchTime {
        guard seconds.isFinite else { return seconds.isNaN ? .now() : .distantFuture }
        guard seconds > 0 else { return .now() }
        let nanoseconds = seconds * 1_000_000_000
        let now = DispatchTime.now().uptimeNanoseconds
        guard nanoseconds < Double(UInt64.max / 2 - now) else { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: now + UInt64(nanoseconds))
    }
}
