import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs outgoing requests with a fresh access token, refreshing it once however many requests
/// arrive while it is stale.
///
/// Every request that needs authentication passes a serial `DispatchQueue`. When the held
/// authentication says ``RefreshableAuthentication/isRefreshNeeded``, the queue is suspended and
/// `refresh()` is called once; requests arriving meanwhile wait on the queue. When the refresh
/// ends, the queue resumes and the waiting requests are signed with the new token, in the order
/// they arrived. While a valid token is held and nobody waits, a request is signed at once on the
/// caller's thread, without a queue hop.
///
/// ```swift
/// let closure = RefreshingRequestClosure<SpotifyAuthentication>()
///
/// // async/await
/// let signed = try await closure.authorize(URLRequest(url: meURL))
/// let (data, _) = try await URLSession.shared.data(for: signed)
///
/// // callbacks
/// closure.authorize(URLRequest(url: meURL)) { result in … }
/// ```
///
/// Nothing is stuck and nothing is lost:
/// - A failed refresh fails every waiting request with ``RefreshQueueError/refreshFailed(_:)``;
///   the queue runs again and the next request may refresh.
/// - A refresh that takes longer than `refreshTimeout` fails the waiting requests with
///   ``RefreshQueueError/refreshTimedOut``; if it succeeds later, its value is still adopted so that
///   a rotated refresh token is not lost.
/// - Every completion handler is called exactly once, including after ``AuthorizationTask/cancel()``
///   and when the closure is released while requests wait (waiting requests keep it alive until
///   they have been answered).
public final class RefreshingRequestClosure<Authentication: RefreshableAuthentication>: @unchecked Sendable {
    /// How long a refresh may take before waiting requests fail with
    /// ``RefreshQueueError/refreshTimedOut``.
    public let refreshTimeout: TimeInterval

    /// How many refreshes are allowed in a sliding window.
    public let refreshWindow: RefreshWindow

    /// Which header carries the token and how it is written.
    public let scheme: AuthorizationScheme

    /// What happens to a request when no authentication is found.
    public let missingAuthentication: MissingAuthenticationPolicy

    let requiresAuthentication: @Sendable (URLRequest) -> Bool
    private let find: @Sendable () -> Authentication?
    private let refresh: @Sendable (Authentication) -> Future<Authentication>
    private let onEvent: (@Sendable (RefreshEvent) -> Void)?
    private let now: @Sendable () -> TimeInterval
    private let queue: DispatchQueue
    private let state = Locked(State())

    /// Creates a closure. Every parameter has a default.
    ///
    /// - Parameters:
    ///   - refreshTimeout: Seconds a refresh may take (default 30). Values that are not positive
    ///     and finite are replaced by the default.
    ///   - refreshWindow: How many refreshes are allowed in how long (default 5 in 30 s).
    ///   - scheme: Which header carries the token (default `Authorization: Bearer <token>`).
    ///   - missingAuthentication: What to do when no authentication is found (default: fail with
    ///     ``RefreshQueueError/notAuthenticated``).
    ///   - requiresAuthentication: Decides per request whether it is signed at all. Requests for
    ///     which it returns `false` — the token request itself, public endpoints, other hosts —
    ///     skip the queue and pass unchanged, so a refresh sent through the same provider cannot
    ///     wait for itself. Default: every request is signed.
    ///   - find: Loads the persisted authentication when nothing is held (default
    ///     `Authentication.find()`).
    ///   - onEvent: Receives ``RefreshEvent``s for logging and metrics; never while a lock is held.
    ///   - clock: Monotonic seconds, for the refresh window and durations. Inject one in tests.
    public convenience init(
        refreshTimeout: TimeInterval = 30,
        refreshWindow: RefreshWindow = .default,
        scheme: AuthorizationScheme = .bearer,
        missingAuthentication: MissingAuthenticationPolicy = .fail,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool = { _ in true },
        find: @escaping @Sendable () -> Authentication? = { Authentication.find() },
        onEvent: (@Sendable (RefreshEvent) -> Void)? = nil,
        clock: @escaping @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }
    ) {
        self.init(
            refreshTimeout: refreshTimeout, refreshWindow: refreshWindow, scheme: scheme,
            missingAuthentication: missingAuthentication, requiresAuthentication: requiresAuthentication,
            find: find, refresh: { $0.refresh() }, onEvent: onEvent, clock: clock)
    }

    /// The designated initializer: `refresh` replaces `Authentication.refresh()`, so that a store
    /// can wrap it (lock, compare, save).
    init(
        refreshTimeout: TimeInterval,
        refreshWindow: RefreshWindow,
        scheme: AuthorizationScheme,
        missingAuthentication: MissingAuthenticationPolicy,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool,
        find: @escaping @Sendable () -> Authentication?,
        refresh: @escaping @Sendable (Authentication) -> Future<Authentication>,
        onEvent: (@Sendable (RefreshEvent) -> Void)?,
        clock: @escaping @Sendable () -> TimeInterval
    ) {
        self.refreshTimeout = refreshTimeout.isFinite && refreshTimeout > 0 ? refreshTimeout : 30
        self.refreshWindow = refreshWindow
        self.scheme = scheme
        self.missingAuthentication = missingAuthentication
        self.requiresAuthentication = requiresAuthentication
        self.find = find
        self.refresh = refresh
        self.onEvent = onEvent
        self.now = clock
        self.queue = DispatchQueue(label: "RefreshQueue.RefreshingRequestClosure")
    }

    deinit {
        // A running refresh keeps the closure alive (see `RefreshAttempt.lease`), so the queue is
        // never suspended here. Releasing a suspended DispatchQueue would crash: make sure.
        if state.withLock({ $0.refresh != nil }) {
            queue.resume()
        }
    }

    // MARK: - Authorizing requests

    /// Signs `request` and calls `completion` exactly once with the signed request or an error.
    ///
    /// For code that predates async/await, and for providers with a callback-based request hook.
    /// When a valid token is held and no request is waiting, `completion` runs at once, on the
    /// caller's thread, before this method returns. Otherwise it runs later on the closure's queue,
    /// or on the thread that completed the refresh.
    ///
    /// - Returns: A task whose ``AuthorizationTask/cancel()`` completes a waiting request with
    ///   ``RefreshQueueError/cancelled``; you may ignore it.
    @discardableResult
    public func authorize(
        _ request: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> AuthorizationTask {
        guard requiresAuthentication(request) else {
            completion(.success(request))
            return .finished
        }
        if let signed = signedWithoutWaiting(request) {
            completion(.success(signed))
            return .finished
        }
        return enqueue(request, completion: completion)
    }

    /// Signs `request`, waiting for a refresh if one is needed.
    ///
    /// Honours task cancellation: a cancelled task stops waiting at once and throws
    /// `CancellationError`; its request is never signed.
    ///
    /// - Throws: A ``RefreshQueueError``, or `CancellationError`.
    public func authorize(_ request: URLRequest) async throws -> URLRequest {
        guard requiresAuthentication(request) else { return request }
        if let signed = signedWithoutWaiting(request) { return signed }
        return try await waitForQueue { completion in enqueue(request, completion: completion) }
    }

    /// Signs again a request that the server rejected with HTTP 401, refreshing first when the
    /// rejected token is the one held now.
    ///
    /// A token can expire while its request is in flight, or be revoked early. Call this with
    /// the request exactly as it was sent (signed by this closure), then send what it returns
    /// once. However many rejected requests arrive, the token they carried is refreshed once;
    /// requests that carried an older token are re-signed with the current one at once. To avoid
    /// 401 loops, retry a request only once, and do not retry 403 (`insufficient_scope`): a new
    /// token does not help.
    ///
    /// - Returns: A task whose ``AuthorizationTask/cancel()`` completes a waiting request with
    ///   ``RefreshQueueError/cancelled``; you may ignore it.
    @discardableResult
    public func reauthorize(
        _ rejected: URLRequest,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> AuthorizationTask {
        guard requiresAuthentication(rejected) else {
            completion(.success(rejected))
            return .finished
        }
        return enqueue(
            rejected, rejectedHeader: rejected.value(forHTTPHeaderField: scheme.headerName), completion: completion)
    }

    /// Signs again a request that the server rejected with HTTP 401; see
    /// ``reauthorize(_:completion:)``. Honours task cancellation like ``authorize(_:)``.
    public func reauthorize(_ rejected: URLRequest) async throws -> URLRequest {
        guard requiresAuthentication(rejected) else { return rejected }
        let header = rejected.value(forHTTPHeaderField: scheme.headerName)
        return try await waitForQueue { completion in
            enqueue(rejected, rejectedHeader: header, completion: completion)
        }
    }

    /// Hands a request to the queue and waits for it, honouring task cancellation.
    private func waitForQueue(
        _ enqueue: (@escaping AuthorizationTask.Completion) -> AuthorizationTask
    ) async throws -> URLRequest {
        try Task.checkCancellation()
        let cancellation = CancellationRelay<AuthorizationTask>()
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

    /// Forgets the authentication held in memory; the next request calls `find()` again.
    ///
    /// Call it after logging out or after storing a new authentication yourself. A refresh that
    /// is running when you call this still ends its waiting requests, but its result is not kept.
    public func invalidate() {
        let forgotten = state.withLock { state in
            defer {
                state.held = nil
                state.epoch &+= 1
            }
            return state.held
        }
        // Released here, outside the lock: the authentication's deinit is user code.
        _ = forgotten
    }

    // MARK: - Fast path

    /// `request` signed at once, when a valid authentication is held and nobody waits.
    @inline(__always)
    private func signedWithoutWaiting(_ request: URLRequest) -> URLRequest? {
        let held = state.withLock { state in state.backlog == 0 ? state.held : nil }
        guard let held, case .success(let header) = held.header else { return nil }
        // User code: read outside the lock.
        guard !held.authentication.isRefreshNeeded else { return nil }
        var signed = request
        scheme.sign(&signed, with: header)
        return signed
    }

    // MARK: - The queue

    private func enqueue(
        _ request: URLRequest,
        rejectedHeader: String? = nil,
        completion: @escaping AuthorizationTask.Completion
    ) -> AuthorizationTask {
        // Tickets are handed out in queue order: both happen under the lock.
        let (task, waiting) = state.withLock { state in
            var rejectedGeneration: UInt64?
            if let rejectedHeader, let held = state.held, case .success(rejectedHeader) = held.header {
                rejectedGeneration = held.generation
            }
            let task = AuthorizationTask(
                request: request, ticket: state.nextTicket, rejectedGeneration: rejectedGeneration,
                completion: completion)
            state.nextTicket &+= 1
            state.backlog += 1
            queue.async { self.process(task) }
            return (task, state.backlog)
        }
        emit(.requestWaiting(waiting: waiting))
        return task
    }

    /// Decides what happens to one request. Runs on the queue, or on the thread that ends a
    /// refresh while the queue is suspended, so never twice at the same time.
    private func process(_ task: AuthorizationTask) {
        guard !task.isCompleted else {
            finish(task, nil)
            return
        }
        let (held, failure, epoch) = state.withLock { state in (state.held, state.failure, state.epoch) }
        if let failure, task.ticket < failure.before {
            finish(task, .failure(failure.error))
            return
        }
        guard let held = held ?? loadAuthentication(epoch: epoch) else {
            switch missingAuthentication {
            case .fail: finish(task, .failure(RefreshQueueError.notAuthenticated))
            case .sendUnsigned: finish(task, .success(task.request))
            }
            return
        }
        // A token the server rejected is refreshed even if it does not know it is stale.
        let rejected = task.rejectedGeneration == held.generation
        guard rejected || held.authentication.isRefreshNeeded else {
            finish(task, signed(task.request, with: held))
            return
        }
        if let refused = admitRefresh() {
            emit(.refreshRefused(refused))
            finish(task, .failure(refused))
            return
        }
        if let backoff = state.withLock({ $0.backoff }), now() < backoff.until {
            // The server said when to come back (Retry-After): until then, answer with its error.
            finish(task, .failure(backoff.error))
            return
        }
        startRefresh(of: held, for: task)
    }

    /// Completes `task` (unless `result` is nil: it completed already) and takes it off the backlog.
    private func finish(_ task: AuthorizationTask, _ result: Result<URLRequest, any Error>?) {
        if let result { task.complete(result) }
        // Only now may new requests take the fast path: they must not overtake this one.
        state.withLock { $0.backlog -= 1 }
    }

    private func signed(_ request: URLRequest, with held: Held) -> Result<URLRequest, any Error> {
        switch held.header {
        case .success(let header):
            var signed = request
            scheme.sign(&signed, with: header)
            return .success(signed)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// Calls `find()` and holds what it returns, unless something was adopted meanwhile.
    ///
    /// `epoch` is the epoch seen before calling `find()`: if `invalidate()` was called while
    /// `find()` ran, what it returned may be the logged-out user's, so it is read again.
    private func loadAuthentication(epoch: UInt64) -> Held? {
        var epoch = epoch
        while true {
            let found = find()
            emit(.authenticationLoaded(found: found != nil))
            guard let found else { return nil }
            let header = headerValue(of: found)
            let outcome = state.withLock { state -> Result<Held, Stale> in
                if let held = state.held { return .success(held) }
                guard state.epoch == epoch else { return .failure(Stale(epoch: state.epoch)) }
                state.generation &+= 1
                let held = Held(authentication: found, generation: state.generation, epoch: epoch, header: header)
                state.held = held
                return .success(held)
            }
            switch outcome {
            case .success(let held): return held
            case .failure(let stale): epoch = stale.epoch
            }
        }
    }

    private func headerValue(of authentication: Authentication) -> Result<String, RefreshQueueError> {
        let token = authentication.accessToken
        return Result { () throws(RefreshQueueError) in try scheme.headerValue(for: token) }
    }

    // MARK: - Refreshing

    /// Records a refresh in the window, or says why it may not start.
    private func admitRefresh() -> RefreshQueueError? {
        let time = now()
        let window = refreshWindow
        return state.withLock { state in
            state.recentRefreshes.removeAll { time - $0.startedAt >= window.interval }
            guard state.recentRefreshes.count < window.maximumRefreshes else { return .excessiveRefresh }
            return nil
        }
    }

    /// Suspends the queue and calls `refresh()` once; `task` is answered when the refresh ends.
    private func startRefresh(of held: Held, for task: AuthorizationTask) {
        let startedAt = now()
        let attempt = state.withLock { state -> RefreshAttempt? in
            // While `isRefreshNeeded` was read, a late refresh may have been adopted or
            // `invalidate()` called: then `held` is not the authentication to refresh any more.
            guard state.held?.generation == held.generation else { return nil }
            state.attemptCounter &+= 1
            let attempt = RefreshAttempt(
                id: state.attemptCounter, epoch: held.epoch, startedAt: startedAt, initiator: task,
                lease: Locked(self))
            state.refresh = attempt
            state.recentRefreshes.append(StartedRefresh(id: attempt.id, startedAt: startedAt))
            return attempt
        }
        guard let attempt else {
            process(task)
            return
        }
        queue.suspend()
        // The lease keeps the closure alive until the refresh ends, one way or the other; the
        // timer only holds the lease, so it does not keep the closure once the refresh is over.
        let (lease, attemptID) = (attempt.lease, attempt.id)
        DispatchQueue.global().asyncAfter(deadline: .after(seconds: refreshTimeout)) {
            lease.withLock { $0 }?.refreshTimedOut(attemptID)
        }
        emit(.refreshStarted(generation: held.generation))
        // `refresh()` runs off the queue: user code that blocks or re-enters cannot stall it,
        // and the timeout can always free the waiting requests.
        DispatchQueue.global().async {
            self.refresh(held.authentication).observe { [weak self] result in
                self?.refreshEnded(attempt, with: result)
            }
        }
    }

    private func refreshTimedOut(_ attemptID: UInt64) {
        let ended = state.withLock { state -> (RefreshAttempt, Int, Displaced)? in
            guard let attempt = state.refresh, attempt.id == attemptID else { return nil }
            state.refresh = nil
            let displaced = Displaced(failure: state.failure)
            state.failure = Failure(error: .refreshTimedOut, before: state.nextTicket)
            return (attempt, state.backlog, displaced)
        }
        guard let (attempt, waiting, displaced) = ended else { return }
        // Released here, outside the lock: an earlier failure may hold a user's error.
        _ = displaced
        emit(.refreshTimedOut(after: now() - attempt.startedAt))
        resume(after: attempt, waiting: waiting)
    }

    private func refreshEnded(_ attempt: RefreshAttempt, with result: Result<Authentication, any Error>) {
        let endedAt = now()
        let duration = endedAt - attempt.startedAt
        // User code (accessToken, isRefreshNeeded) is read before taking the lock.
        let refreshed = result.map { authentication in
            (authentication, headerValue(of: authentication), authentication.isRefreshNeeded)
        }
        // So are the error's answers (TransportFailure, RetryAfterProviding and the like).
        var failureTraits: (isTransport: Bool, retryAfter: TimeInterval?, requiresReauthentication: Bool)?
        if case .failure(let error) = result {
            failureTraits = (Self.isTransportError(error), Self.retryAfter(error), Self.requiresReauthentication(error))
        }
        let (outcome, displaced) = state.withLock { state -> (RefreshOutcome, Displaced) in
            let onTime = state.refresh?.id == attempt.id
            if onTime { state.refresh = nil }
            let current = attempt.epoch == state.epoch
            switch refreshed {
            case .success(let (authentication, header, stillStale)):
                guard current, attempt.id > state.lastAdoptedAttempt else {
                    return (onTime ? .discarded(waiting: state.backlog) : .ignored, Displaced())
                }
                state.lastAdoptedAttempt = attempt.id
                state.generation &+= 1
                var displaced = Displaced(held: state.held)
                state.held = Held(
                    authentication: authentication, generation: state.generation, epoch: attempt.epoch,
                    header: header)
                guard onTime else { return (.adoptedLate, displaced) }
                if stillStale {
                    // Waiting requests fail instead of refreshing again: no refresh storm.
                    displaced.failure = state.failure
                    state.failure = Failure(error: .excessiveRefresh, before: state.nextTicket)
                }
                return (stillStale ? .stale(waiting: state.backlog) : .succeeded(waiting: state.backlog), displaced)
            case .failure(let error):
                let traits = failureTraits ?? (isTransport: false, retryAfter: nil, requiresReauthentication: false)
                var displaced = Displaced()
                if traits.isTransport {
                    state.recentRefreshes.removeAll { $0.id == attempt.id }
                }
                if let delay = traits.retryAfter, delay > 0 {
                    displaced.backoff = state.backoff
                    state.backoff = Backoff(until: endedAt + delay, error: .refreshFailed(error))
                }
                guard onTime else { return (.ignored, displaced) }
                if current {
                    displaced.failure = state.failure
                    state.failure = Failure(error: .refreshFailed(error), before: state.nextTicket)
                    if traits.requiresReauthentication {
                        // The refresh token is dead: refreshing it again cannot help. Forget it, so
                        // the next request loads afresh (finding nothing once the store is cleared).
                        displaced.held = state.held
                        state.held = nil
                    }
                }
                return (.failed(.refreshFailed(error), waiting: state.backlog), displaced)
            }
        }
        // Released here, outside the lock: the authentication's deinit is user code, and so may
        // be that of an error an earlier failure held.
        _ = displaced
        switch outcome {
        case .ignored:
            return
        case .adoptedLate:
            emit(.lateRefreshAdopted(duration: duration))
            return
        case .succeeded(let waiting):
            emit(.refreshSucceeded(duration: duration))
            resume(after: attempt, waiting: waiting)
        case .stale(let waiting):
            emit(.refreshFailed(.excessiveRefresh, duration: duration))
            resume(after: attempt, waiting: waiting)
        case .failed(let error, let waiting):
            emit(.refreshFailed(error, duration: duration))
            resume(after: attempt, waiting: waiting)
        case .discarded(let waiting):
            resume(after: attempt, waiting: waiting)
        }
    }

    /// Answers the request that started the refresh, then lets the waiting ones run, in order.
    private func resume(after attempt: RefreshAttempt, waiting: Int) {
        emit(.requestsResumed(waiting: waiting))
        process(attempt.initiator)
        queue.resume()
        // The refresh is over: the closure no longer needs to outlive its owner for it.
        let lease = attempt.lease.withLock { lease in
            defer { lease = nil }
            return lease
        }
        _ = lease
    }

    // MARK: - Helpers

    private func emit(_ event: @autoclosure () -> RefreshEvent) {
        onEvent?(event())
    }

    /// How long the server asked to wait before the next refresh, if it did.
    private static func retryAfter(_ error: any Error) -> TimeInterval? {
        if case RefreshQueueError.refreshFailed(let underlying) = error { return retryAfter(underlying) }
        guard let delay = (error as? any RetryAfterProviding)?.retryAfter, delay.isFinite else { return nil }
        // A day at most: a wrong header must not lock the app out for longer.
        return min(delay, 86_400)
    }

    /// Whether a refresh failed because the network failed, not because the server refused.
    private static func isTransportError(_ error: any Error) -> Bool {
        if error is URLError { return true }
        if case RefreshQueueError.refreshFailed(let underlying) = error { return isTransportError(underlying) }
        if let wrapping = error as? any TransportFailure { return wrapping.isTransportFailure }
        return (error as NSError).domain == NSURLErrorDomain
    }

    private static func requiresReauthentication(_ error: any Error) -> Bool {
        (error as? any ReauthenticationRequiring)?.requiresReauthentication ?? false
    }

    private static func asCancellationError(_ error: any Error) -> any Error {
        if case RefreshQueueError.cancelled = error { return CancellationError() }
        return error
    }
}

// MARK: - State

extension RefreshingRequestClosure {
    /// Everything the closure knows, behind its one lock.
    private struct State {
        /// The authentication that signs requests, if one is held.
        var held: Held?
        /// Counts the authentications held so far; each find or refresh starts a generation.
        var generation: UInt64 = 0
        /// Bumped by `invalidate()`: a refresh from an older epoch is not adopted.
        var epoch: UInt64 = 0
        /// The ticket of the next request that goes through the queue.
        var nextTicket: UInt64 = 0
        /// Requests handed to the queue and not yet answered; the fast path needs zero.
        var backlog = 0
        /// The refresh the queue is suspended for.
        var refresh: RefreshAttempt?
        var attemptCounter: UInt64 = 0
        /// The newest attempt whose value was adopted, so an older late result never wins.
        var lastAdoptedAttempt: UInt64 = 0
        /// The error that requests which arrived before the last failed refresh ended inherit.
        var failure: Failure?
        /// Refreshes counted against the refresh window.
        var recentRefreshes: [StartedRefresh] = []
        /// No refresh before this time: the server answered the last one with `Retry-After`.
        var backoff: Backoff?
    }

    /// What a change of state under the lock replaced, to be released after the lock: releasing an
    /// authentication or a user's error may run user code (a `deinit`).
    private struct Displaced {
        var held: Held?
        var failure: Failure?
        var backoff: Backoff?
    }

    /// An authentication in use, with its header value computed once for the whole generation.
    private final class Held: Sendable {
        let authentication: Authentication
        let generation: UInt64
        /// The epoch it was found or refreshed in; a refresh of it is adopted only in that epoch.
        let epoch: UInt64
        let header: Result<String, RefreshQueueError>

        init(
            authentication: Authentication, generation: UInt64, epoch: UInt64, header: Result<String, RefreshQueueError>
        ) {
            self.authentication = authentication
            self.generation = generation
            self.epoch = epoch
            self.header = header
        }
    }

    private struct RefreshAttempt: Sendable {
        let id: UInt64
        let epoch: UInt64
        let startedAt: TimeInterval
        /// The request that found the authentication stale; answered first when the refresh ends.
        let initiator: AuthorizationTask
        /// Holds the closure while the refresh runs; emptied when it ends.
        let lease: Locked<RefreshingRequestClosure?>
    }

}

// Not nested in the generic class: nested types would be generic over `Authentication` and
// need a runtime metadata lookup on every use from unspecialized code.

/// A refresh counted against the refresh window: only when it started, not what it carried.
private struct StartedRefresh {
    let id: UInt64
    let startedAt: TimeInterval
}

/// A `Retry-After` in force: until `until` (the closure's clock), refreshes fail with `error`.
private struct Backoff {
    let until: TimeInterval
    let error: RefreshQueueError
}

/// `invalidate()` was called while `find()` ran; `epoch` is the new epoch.
private struct Stale: Error {
    let epoch: UInt64
}

private struct Failure {
    let error: RefreshQueueError
    /// Requests with a smaller ticket arrived before the failure and fail with `error`.
    let before: UInt64
}

private enum RefreshOutcome {
    case succeeded(waiting: Int)
    case stale(waiting: Int)
    case failed(RefreshQueueError, waiting: Int)
    /// Ended on time, but `invalidate()` was called meanwhile: waiting requests load afresh.
    case discarded(waiting: Int)
    case adoptedLate
    case ignored
}
