import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs outgoing requests with a fresh access token, refreshing it once however many requests
/// arrive while it is stale.
///
/// While a valid token is held and nobody waits, a request is signed at once on the caller's
/// thread. When the held authentication says ``RefreshableAuthentication/isRefreshNeeded``, the
/// closure's serial `DispatchQueue` is suspended and `refresh()` is called once; requests arriving
/// meanwhile wait, and when the refresh ends they are signed with the new token in the order they
/// arrived. When it says ``RefreshableAuthentication/isRefreshRecommended``, one refresh runs in
/// the background while requests are still signed with the current token.
///
/// ```swift
/// let closure = RefreshingRequestClosure<SpotifyAuthentication>()
///
/// // async/await: sign, send, and one retry after a 401
/// let (data, response) = try await closure.data(for: URLRequest(url: meURL), using: .shared)
///
/// // callbacks
/// closure.authorize(URLRequest(url: meURL)) { result in … }
/// ```
///
/// Nothing is stuck and nothing is lost:
/// - Never two refreshes of one token: a refresh runs until it ends, however long it takes;
///   requests that need it meanwhile wait for it. Only a refresh that has not ended after
///   `abandonAfter` is given up, and only then may another refresh of the same token start.
/// - Every request is answered within `refreshTimeout` of when it began to wait: with the new
///   token, with the refresh's error, or with ``RefreshQueueError/refreshTimedOut``; unless a
///   completion handler blocks, since completions run one at a time. A refresh that
///   succeeds after its waiters timed out is still adopted, so a rotated refresh token is not lost.
/// - A failed refresh fails every waiting request with the error `refresh()` failed with, as it
///   is (``RefreshQueueError/notAuthenticated`` when the refresh found nobody logged in); the next
///   request may refresh again.
/// - Every completion handler is called exactly once, including after ``AuthorizationTask/cancel()``
///   and when the closure is released while requests wait.
///
/// The decisions themselves are made by a pure state machine; this class is its driver: it owns
/// the lock, the queue and the timers, and calls user code (`find()`, `refresh()`, the token,
/// completions, `onEvent`) only outside the lock.
public final class RefreshingRequestClosure<Authentication: RefreshableAuthentication>: @unchecked Sendable {
    /// The options this closure was created with, with ``Options/abandonAfter`` resolved to the
    /// limit the closure uses (never `nil`, and at least ``Options/refreshTimeout``).
    public let options: Options

    /// How long a refresh may run without ending before it is given up (``options``' resolved
    /// ``Options/abandonAfter``).
    let abandonAfter: TimeInterval

    let scheme: AuthorizationScheme
    let origins: AllowedOrigins
    let requiresAuthentication: @Sendable (URLRequest) -> Bool
    let completionQueue: DispatchQueue?
    let find: @Sendable () throws -> Authentication?
    let refresh: @Sendable (Authentication, RefreshBudget) -> Future<Authentication>
    let onEvent: (@Sendable (RefreshEvent) -> Void)?
    /// The origins whose requests went out unsigned and were reported (see `reportUnsigned`).
    let unsignedOrigins = Locked<Set<String>>([])
    let now: @Sendable () -> TimeInterval
    /// The serial queue the pump moves the line on (`find()` and freshness reads run there). It is
    /// suspended exactly while a refresh holds the line, and suspended and resumed under the lock
    /// of the event that decided it: so no pump step runs while the line waits for a refresh, a
    /// refresh that ends between a request joining and the suspension cannot resume a queue that
    /// was never suspended, and the requests behind the refresh are taken up in arrival order once
    /// it resumes.
    let queue: DispatchQueue
    /// Where wait timers, the abandon limit and an abandoned refresh's end run: a serial queue
    /// of the closure's own, so that they never wait for a thread of the global pool, which a
    /// `refresh()` that blocks (or any other code) may have taken.
    let timerQueue: DispatchQueue
    /// The closure's one lock, around the state machine and the ledger handed to waiting tasks.
    let state: Locked<LockedState>

    /// Creates a closure that loads the authentication with `find` when it holds none and
    /// refreshes it with `Authentication.refresh()`.
    ///
    /// ```swift
    /// let authentication = RefreshingRequestClosure<SpotifyAuthentication>()
    /// let patient = RefreshingRequestClosure<SpotifyAuthentication>(options: .init(refreshTimeout: 60))
    /// ```
    ///
    /// - Parameters:
    ///   - options: Every other option; see ``Options`` for each default.
    ///   - find: Loads the persisted authentication when nothing is held (default
    ///     `Authentication.find()`).
    public convenience init(
        options: Options = Options(),
        find: @escaping @Sendable () -> Authentication? = { Authentication.find() }
    ) {
        self.init(options: options, find: find, refresh: Self.refreshWithinBudget)
    }

    /// Creates a closure whose requests wait at most `refreshTimeout` seconds; every other option
    /// has its default. The same as `init(options: Options(refreshTimeout: refreshTimeout), find: find)`.
    public convenience init(
        refreshTimeout: TimeInterval,
        find: @escaping @Sendable () -> Authentication? = { Authentication.find() }
    ) {
        self.init(options: Options(refreshTimeout: refreshTimeout), find: find)
    }

    /// The designated initializer: `refresh` replaces `Authentication.refresh()`, so that a store
    /// can wrap it (lock, compare, save).
    init(
        options: Options,
        find: @escaping @Sendable () throws -> Authentication?,
        refresh: @escaping @Sendable (Authentication, RefreshBudget) -> Future<Authentication>
    ) {
        let (options, abandonAfter) = options.resolved
        self.options = options
        self.abandonAfter = abandonAfter
        self.scheme = options.scheme
        self.origins = options.origins
        self.requiresAuthentication = options.requiresAuthentication
        self.completionQueue = options.completionQueue
        self.find = find
        self.refresh = refresh
        self.onEvent = options.onEvent
        self.now = options.clock
        self.queue = DispatchQueue(label: "RefreshQueue.RefreshingRequestClosure")
        self.timerQueue = DispatchQueue(label: "RefreshQueue.RefreshingRequestClosure.timers")
        self.state = Locked(
            LockedState(
                machine: RefreshStateMachine(
                    configuration: .init(
                        refreshTimeout: options.refreshTimeout, abandonAfter: abandonAfter,
                        window: options.refreshWindow, missingAuthentication: options.missingAuthentication))))
    }

    deinit {
        // A running refresh and a pending pump keep the closure alive, so the queue is never
        // suspended here. Releasing a suspended DispatchQueue would crash: make sure.
        if state.withLock({ $0.machine.isQueueSuspended }) {
            queue.resume()
        }
    }

    // MARK: - Authorizing requests

    /// Signs `request` and calls `completion` exactly once with the signed request or an error.
    ///
    /// For code that predates async/await, and for providers with a callback-based request hook.
    /// Without a ``Options/completionQueue``: when the request is answered without waiting (a
    /// valid token is held and no request is waiting, the request is not to be signed, or it is
    /// refused at once because no refresh may start now), `completion` runs at once, on the
    /// caller's thread, before this method returns; except that a refusal waits for completions
    /// being delivered at that moment (when called from inside one, say), and runs just after
    /// them, in order, on the thread delivering them. Otherwise it runs later, on a thread of the
    /// closure's (its queue, its timer queue, or the thread where the refresh ended) or on
    /// whichever thread is delivering other completions at that moment, one at a time and in
    /// arrival order; or on the thread that calls ``AuthorizationTask/cancel()``.
    ///
    /// - Returns: A task whose ``AuthorizationTask/cancel()`` completes a waiting request with
    ///   ``RefreshQueueError/cancelled``; you may ignore it.
    @discardableResult
    public func authorize(
        _ request: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> AuthorizationTask {
        // Without a completion queue, the caller's closure is handed on as it is: not copied.
        guard completionQueue != nil else { return startAuthorizing(request, completion: completion) }
        return startAuthorizing(request, completion: delivering(completion))
    }

    /// ``authorize(_:completion:)`` with `completion` already on the completion queue.
    @discardableResult
    @inline(__always)
    func startAuthorizing(
        _ request: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> AuthorizationTask {
        if let unsigned = answerWithoutSigning(request) {
            completion(unsigned)
            return .finished
        }
        switch signWithoutWaiting(request) {
        // Moved into the result, not copied: a copy costs a retain and a release per request.
        case .signed(let signed):
            completion(.success(consume signed))
            return .finished
        case .wait(let staleGeneration):
            return enqueue(request, staleGeneration: staleGeneration, completion: completion)
        }
    }

    /// Signs `request`, waiting for a refresh if one is needed.
    ///
    /// Honours task cancellation: a task cancelled while its request waits stops waiting at once
    /// and throws `CancellationError`; that request is never signed. A request signed without
    /// waiting is returned even to a task cancelled already (the next `await` of a cancellable
    /// call, such as the transfer, notices).
    ///
    /// - Throws: A ``RefreshQueueError``, the error a refresh it waited for failed with (an
    ///   ``OAuth2Error``, a store's error, or your `refresh()`'s), or `CancellationError`.
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        if let unsigned = answerWithoutSigning(request) { return try unsigned.get() }
        switch signWithoutWaiting(request) {
        case .signed(let signed):
            return signed
        case .wait(let staleGeneration):
            return try await waitInLine { completion in
                enqueue(request, staleGeneration: staleGeneration, completion: completion)
            }
        }
    }

    /// Signs again a request that the server rejected with HTTP 401, refreshing first when the
    /// rejected token is the one held now.
    ///
    /// A token can expire while its request is in flight, or be revoked early. Call this with
    /// the request exactly as it was sent (signed by this closure), then send what it returns
    /// once. However many rejected requests arrive, the token they carried is refreshed once;
    /// requests that carried an older token start no refresh: they are signed with the current
    /// one (after waiting like any request, if it needs a refresh itself). To avoid
    /// 401 loops, retry a request only once, and do not retry 403 (`insufficient_scope`): a new
    /// token does not help.
    ///
    /// Pass the 401 `response` when you have it: a 401 that came from another origin than the
    /// one the request was signed for (after a redirect, say) says nothing about the token, and
    /// no refresh starts on its account: the request is then signed like a new one, with the
    /// current token (after a refresh only if that token needs one anyway).
    ///
    /// - Returns: A task whose ``AuthorizationTask/cancel()`` completes a waiting request with
    ///   ``RefreshQueueError/cancelled``; you may ignore it.
    @discardableResult
    public func reauthorize(
        _ rejected: URLRequest,
        response: URLResponse? = nil,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> AuthorizationTask {
        let completion = delivering(completion)
        if let unsigned = answerWithoutSigning(rejected) {
            completion(unsigned)
            return .finished
        }
        let header = rejectedHeader(of: rejected, response)
        return enqueue(
            rejected, rejectedHeader: header, staleGeneration: staleGeneration(rejecting: header),
            completion: completion)
    }

    /// Signs again a request that the server rejected with HTTP 401; see
    /// ``reauthorize(_:response:completion:)``. Honours task cancellation like ``authorize(_:)``.
    public func reauthorize(_ rejected: URLRequest, response: URLResponse? = nil) async throws -> URLRequest {
        if let unsigned = answerWithoutSigning(rejected) { return try unsigned.get() }
        let header = rejectedHeader(of: rejected, response)
        let stale = staleGeneration(rejecting: header)
        return try await waitInLine { completion in
            enqueue(rejected, rejectedHeader: header, staleGeneration: stale, completion: completion)
        }
    }

    /// The held generation, when `header` is its header and it needs a refresh now: its rejection
    /// then says only that it expired on its way, not that refreshing loops.
    private func staleGeneration(rejecting header: String?) -> UInt64? {
        guard let header else { return nil }
        let held = state.withLock { $0.machine.heldCredential }
        guard let (credential, generation) = held, credential.signingHeader == header else { return nil }
        // User code, read outside the lock.
        return credential.isRefreshNeeded ? generation : nil
    }

    /// The token header `rejected` carried, when its rejection can be blamed on it: not when the
    /// 401 came from another origin.
    private func rejectedHeader(of rejected: URLRequest, _ response: URLResponse?) -> String? {
        if let response, Origin(response.url) != Origin(rejected.url) { return nil }
        return rejected.value(forHTTPHeaderField: scheme.headerName)
    }

    /// Answers every waiting request now with a cancellation error; a refresh in flight keeps
    /// running.
    ///
    /// For a server shutting down or a user logging out: each request waiting in line, and each
    /// ``refreshIfNeeded(completion:)`` caller, is answered once, at once, with
    /// ``RefreshQueueError/cancelled`` (the `async` forms throw `CancellationError`), in arrival
    /// order. A refresh in flight is not stopped: its result is adopted as usual, and requests
    /// made after this call wait for it, or start a new one, as any request does. Requests
    /// already handed their answer keep it.
    public func cancelAll() {
        let now = self.now()
        perform(update { $0.cancelAll(now: now) })
    }

    // MARK: - Managing the authentication

    /// Forgets the authentication held in memory; the next request calls `find()` again.
    ///
    /// Call it after logging out or after storing a new authentication yourself. A refresh that
    /// is running when you call this is not adopted when it ends, and nobody waits for it any
    /// more: the requests that were waiting for it go on at once with what `find()` gives now.
    /// The refresh itself runs on until it ends (or is given up); no other refresh starts before.
    /// Should `find()` have given meanwhile the very authentication it refreshes, that copy is
    /// forgotten when the refresh succeeds, and `find()` is asked again.
    public func invalidate() {
        let now = self.now()
        perform(update { $0.invalidate(now: now) })
    }

    /// Holds `authentication` from now on, as after a login: requests are signed with it, also
    /// those waiting now.
    ///
    /// Whatever was held before is forgotten, and a refresh still running for it is not adopted
    /// when it ends. That refresh runs on until it ends (or is given up), and no other refresh
    /// starts before: if `authentication` itself needs a refresh meanwhile, its requests wait for
    /// that one to end, as long as their `refreshTimeout` allows. Persisting `authentication` is
    /// up to you (a store-backed closure reads its store only when it holds nothing).
    public func adopt(_ authentication: Authentication) {
        let credential = Self.credential(for: authentication, scheme: scheme)
        let now = self.now()
        perform(update { $0.adopt(credential, now: now) })
    }

    /// Refreshes now if the held authentication needs a refresh or recommends one, and calls
    /// `completion` once the held authentication is fresh, or with the error that prevented it.
    ///
    /// For an app coming to the foreground, or before a long upload that must not meet an
    /// expiring token. Loads the authentication first if none is held. When a refresh ahead is
    /// already running, it waits for that one; it never starts a second. Requests are not held
    /// by it: they are signed meanwhile as usual. Like a request, it waits at most
    /// `refreshTimeout`. A token that still works but recommends a refresh which may not start
    /// now (a refresh ahead of it failed, a `Retry-After` pause runs, or only the refresh window's
    /// last place is left, kept for expiry) is left as it is: `completion` succeeds at once.
    ///
    /// - Returns: A task whose ``AuthorizationTask/cancel()`` stops the wait with
    ///   ``RefreshQueueError/cancelled``; you may ignore it.
    @discardableResult
    public func refreshIfNeeded(completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
        -> AuthorizationTask
    {
        let completion = delivering(completion)
        return startProbe { result in completion(result.map { _ in () }) }
    }

    /// Refreshes now if the held authentication needs a refresh or recommends one; see
    /// ``refreshIfNeeded(completion:)``. Honours task cancellation like ``authorize(_:)``.
    ///
    /// - Throws: A ``RefreshQueueError``, the error a refresh it waited for failed with (an
    ///   ``OAuth2Error``, a store's error, or your `refresh()`'s), or `CancellationError`.
    public func refreshIfNeeded() async throws {
        _ = try await waitInLine { completion in startProbe(completion: completion) }
    }

    /// `completion`, moved onto ``Options/completionQueue`` when the options name one.
    ///
    /// The form for requests, not generic: handing the caller's closure through the generic form
    /// wraps it twice (to the generic shape and back), two allocations on every signed request.
    @inline(__always)
    func delivering(_ completion: @escaping AuthorizationTask.Completion) -> AuthorizationTask.Completion {
        guard let completionQueue else { return completion }
        return { value in completionQueue.async { completion(value) } }
    }

    /// `completion`, moved onto ``Options/completionQueue`` when the options name one.
    func delivering<Value: Sendable>(
        _ completion: @escaping @Sendable (Value) -> Void
    ) -> @Sendable (Value) -> Void {
        guard let completionQueue else { return completion }
        return { value in completionQueue.async { completion(value) } }
    }

    /// Hands a request to the line and waits for it, honouring task cancellation.
    private func waitInLine(
        _ enqueue: (@escaping AuthorizationTask.Completion) -> AuthorizationTask
    ) async throws -> URLRequest {
        try Task.checkCancellation()
        let cancellation = CancellationRelay()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = enqueue { result in
                    continuation.resume(with: result.mapError(Self.asCancellationError))
                }
                if !cancellation.start(task) { task.cancel() }
            }
        } onCancel: {
            cancellation.cancel()?.cancel()
        }
    }

    private static func asCancellationError(_ error: any Error) -> any Error {
        if case RefreshQueueError.cancelled = error { return CancellationError() }
        return error
    }

    /// What a probe of `refreshIfNeeded` carries through the line; never signed or sent.
    static var probeRequest: URLRequest { URLRequest(url: URL(fileURLWithPath: "/")) }
}
