import Dispatch
import Foundation

/// A refresh that goes through an ``AuthenticationStore``: what a ``RefreshingRequestClosure``
/// built from a store calls instead of `Authentication.refresh()`.
///
/// With a ``CoordinatedAuthenticationStore`` the whole step runs under the store's lock, which
/// every process sharing the store takes too (with any other store, the same without a lock):
/// 1. take the lock, waiting at most half of the closure's `abandonAfter` (another process holds
///    it for at most that long, so that a refresh finishing within `refreshTimeout` over there is
///    always waited for here);
/// 2. load what is stored. Nothing stored means the session ended in another process (a logout
///    there, or a refresh there that the server refused): fail with
///    ``RefreshQueueError/notAuthenticated`` rather than log the user back in, and call
///    `onReauthenticationRequired`, since this process's user must log in again too.
///    If another process has refreshed meanwhile (the stored authentication differs from the one
///    held here by ``RefreshableAuthentication/sessionIdentity``, is still fresh, and is not one
///    this process replaced itself), adopt it;
/// 3. otherwise refresh the newest of the two (the stored one has the newest refresh token should
///    another process have rotated it), save the result if the store still holds what was
///    refreshed (or an older token this process refreshed away, whose save was missed), release
///    the lock. The comparison and the save are one step with a ``RevisionedAuthenticationStore``
///    (the built-in stores): the save lands only if the store still holds what was compared.
///    A save that fails (the store cannot be read or written for a moment) is tried again after
///    each of `saveRetryPauses`, still under the lock, and never past the moment the refresh
///    would be abandoned: released at the first failure, the lock would let another process
///    refresh the old token, whose refresh token the server may have rotated already.
///    If the store holds something else by then (a logout or a login meanwhile wins),
///    the result is neither saved nor adopted: the refresh fails with ``RefreshSuperseded`` and
///    the closure loads afresh. If the store cannot be read then, or keeps changing under every
///    attempt to save, nothing is saved over it, but the result is used and the save reported as
///    failed: its refresh token may be the only one the server still accepts.
///
/// The lock is held until the refresh has ended, so no other process can send the same refresh
/// token meanwhile, or until the closure abandons the refresh (`abandonAfter` after it started):
/// the same limit, so that a new refresh may start only when no other is still under way. The
/// built-in OAuth 2.0 refresh ends its token request before that.
///
/// A refresh that fails with an error that requires re-authentication (`invalid_grant`) removes
/// the stored authentication (if it is still the one refreshed) and calls
/// `onReauthenticationRequired`, after the lock is released. It is called once per ended session:
/// not again for a session it was called for already (say, a refresh ahead refused, then the
/// refresh that finds the store emptied by it).
struct StoreBackedRefresh<Authentication: RefreshableAuthentication>: Sendable {
    /// What the store holds; throws when it holds something it cannot read now.
    let load: @Sendable () throws -> Authentication?
    /// What the store holds, with the revision a conditional write compares (nil for a store that
    /// cannot compare, which is then checked and written in two steps).
    let readRevision: @Sendable () throws -> (value: Authentication?, revision: StoredRevision?)
    /// Saves if the store still holds the revision; false when it holds something else.
    let save: @Sendable (Authentication, StoredRevision?) throws -> Bool
    /// Deletes what is stored if the store still holds the revision; false when it holds
    /// something else.
    let remove: @Sendable (StoredRevision?) throws -> Bool
    /// Takes the store's cross-process lock, which is `nil` for a store only this process uses.
    let lock: @Sendable (TimeInterval) throws -> (any AuthenticationStoreLock)?
    /// Refreshes an authentication within a budget.
    let refreshBase: @Sendable (Authentication, RefreshBudget) -> Future<Authentication>
    /// Why a refreshed authentication cannot sign requests (its token cannot be a header value),
    /// or `nil`: such a result is neither saved nor used.
    let unusable: @Sendable (Authentication) -> RefreshQueueError?
    let onReauthenticationRequired: (@Sendable (any Error) -> Void)?
    let onSaveFailure: @Sendable (any Error) -> Void
    /// The closure's `onEvent`.
    let onEvent: (@Sendable (RefreshEvent) -> Void)?
    /// The sessions this process refreshed away, by ``RefreshableAuthentication/sessionIdentity``
    /// (the access token, and the refresh token where the type has one): a store still holding
    /// one of them missed a save, and its refresh token may already have been used.
    private let superseded = Locked<[String]>([])
    /// The sessions, by identity, whose end was reported to `onReauthenticationRequired`.
    private let ended = Locked<[String]>([])
    /// Starts the background activity a refresh runs in, given what to do when the system ends
    /// it, and returns how to end it first. Tests replace it: on Linux the system never does.
    var beginActivity: @Sendable (_ onExpiry: @escaping @Sendable () -> Void) -> @Sendable () -> Void = {
        let activity = BackgroundActivity.begin(reason: "Refreshing the access token", onExpiry: $0)
        return { activity.end() }
    }
    /// The pauses before each new attempt at a save that failed. Short: requests may be waiting
    /// for the refresh, and a failure that lasts longer is reported instead.
    var saveRetryPauses: [TimeInterval] = [0.05, 0.2, 0.8]
    /// Waits for one of `saveRetryPauses`, on the thread that saves (a global one, which waits
    /// for the store's locks too; never the closure's queue). Tests replace it.
    var pause: @Sendable (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }

    /// Refreshes through `store`, whose values `decode` turns into authentications and `encode`
    /// back; save failures are reported as ``RefreshEvent/saveFailed(_:)``.
    init<Store: AuthenticationStore>(
        store: Store,
        decode: @escaping @Sendable (Store.Value) -> Authentication,
        encode: @escaping @Sendable (Authentication) -> Store.Value,
        scheme: AuthorizationScheme,
        onReauthenticationRequired: (@Sendable (any Error) -> Void)?,
        onEvent: (@Sendable (RefreshEvent) -> Void)?
    ) {
        let writes = ComparedStoreWrites(store)
        load = { try store.read().map(decode) }
        readRevision = {
            let (value, revision) = try writes.read()
            return (value.map(decode), revision)
        }
        save = { try writes.save(encode($0), $1) }
        remove = writes.remove
        lock = { try store.refreshLock(timeout: $0) }
        refreshBase = RefreshingRequestClosure<Authentication>.refreshWithinBudget
        unusable = { authentication in
            let token = authentication.accessToken
            if case .failure(let error) = Result(catching: { () throws(RefreshQueueError) in
                try scheme.headerValue(for: token)
            }) {
                return error
            }
            return nil
        }
        self.onReauthenticationRequired = onReauthenticationRequired
        onSaveFailure = { onEvent?(.saveFailed(RefreshQueueError.summary(of: $0))) }
        self.onEvent = onEvent
    }

    /// Refreshes `held` as described above, within `budget`.
    func refresh(_ held: Authentication, within budget: RefreshBudget) -> Future<Authentication> {
        Future { complete in
            // Waiting for the lock and writing the file block a thread: never the closure's
            // queue, never the Swift concurrency pool.
            DispatchQueue.global().async {
                run(held, budget: budget, complete: complete)
            }
        }
    }

    /// On iOS, tvOS and watchOS the lock, and the refresh it guards, live inside a background
    /// activity: a suspended app holding a lock in a shared container is killed by the system.
    /// Should the system take the time back, the lock is released at once and the refresh fails as
    /// a transport failure (tried again later).
    private func run(
        _ held: Authentication, budget: RefreshBudget,
        complete: @escaping @Sendable (Result<Authentication, any Error>) -> Void
    ) {
        let release = LockRelease()
        // The expiry and the refresh race to end it: whichever comes first is the outcome, and
        // `complete` is called once.
        let ended = Locked(false)
        let finish: @Sendable (Result<Authentication, any Error>) -> Void = { result in
            let first = ended.withLock { ended in
                defer { ended = true }
                return !ended
            }
            if first { complete(result) }
        }
        let endActivity = beginActivity {
            release.expire()
            finish(.failure(BackgroundTimeExpired()))
        }
        runLocked(held, budget: budget, release: release) { result in
            endActivity()
            finish(result)
        }
    }

    private func runLocked(
        _ held: Authentication, budget: RefreshBudget, release: LockRelease,
        complete: @escaping @Sendable (Result<Authentication, any Error>) -> Void
    ) {
        let storeLock: (any AuthenticationStoreLock)?
        do {
            storeLock = try lock(Self.seconds(until: budget.deadline(atFraction: 0.5)))
        } catch {
            complete(.failure(error))
            return
        }
        // The background time ran out while waiting: the lock goes at once, the refresh has failed.
        guard release.hold(storeLock) else { return }
        let found: Authentication?
        do {
            found = try load()
        } catch {
            // Locked away (data protection) is not logged out, and nothing is saved over it.
            release.unlock()
            complete(.failure(RefreshQueueError.authenticationUnreadable(error)))
            return
        }
        guard let stored = found else {
            release.unlock()
            // The refresh's end (its events) first, then the callback it causes.
            complete(.failure(RefreshQueueError.notAuthenticated))
            reportSessionEnded(RefreshQueueError.notAuthenticated, identities: [held.sessionIdentity])
            return
        }
        // User code (the tokens) is read before taking the lock. Told apart by refresh token too:
        // another process may have rotated only the refresh token, and then the stored one is
        // the only one the server still accepts.
        let storedIdentity = stored.sessionIdentity
        let storedIsOurs = superseded.withLock { $0.contains(storedIdentity) }
        if storedIdentity != held.sessionIdentity, !storedIsOurs, !stored.isRefreshNeeded {
            release.unlock()
            onEvent?(.adoptedFromStore)
            complete(.success(stored))
            return
        }
        let base = storedIsOurs ? held : stored
        // Bound the lock before calling user code, which may block: it is released when the
        // closure abandons the refresh, and not before.
        DispatchQueue.global().asyncAfter(deadline: budget.deadline(atFraction: 1)) { release.unlock() }
        refreshBase(base, budget).observe(on: .global()) { result in
            // Take the lock back from the timer: what is saved or removed under it stays under it.
            // Without a store lock (one process only), there is nothing to lose.
            let owned = release.take()
            let locked = storeLock == nil || owned != nil
            let baseIdentity = base.sessionIdentity
            switch result {
            case .success(let fresh):
                if let problem = unusable(fresh) {
                    // Not saved: the stored authentication (and its refresh token) stays as it was.
                    owned?.unlock()
                    complete(.failure(problem))
                    return
                }
                superseded.withLock { superseded in
                    superseded.append(baseIdentity)
                    if superseded.count > 16 { superseded.removeFirst() }
                }
                // Save only over what was refreshed: a logout or a login meanwhile wins, and then
                // the result is not used either.
                // Tried again only while the lock is this refresh's: not for a refresh that
                // outlived it (its deadline has passed), nor after the background time ran out.
                let save = { saveIfCurrent(fresh, retryingUntil: budget.deadline(atFraction: 1), unless: release) }
                let outcome = locked ? save() : relocked(otherwise: { .notSaved($0) }, save)
                owned?.unlock()
                switch outcome {
                case .saved:
                    break
                case .superseded:
                    complete(.failure(RefreshSuperseded()))
                    return
                case .notSaved(let error):
                    // The server may have rotated the refresh token already: dropping the result
                    // would leave only the spent one. Kept in memory; the next refresh here starts
                    // from it and saves it then. Reported once the lock is released: the closure's
                    // `onEvent` never runs under the store's lock, and a slow handler must not keep
                    // others waiting.
                    onSaveFailure(error)
                }
            case .failure(let error):
                let reauthenticate = ErrorClassification.requiresReauthentication(error)
                if reauthenticate {
                    // Only the session that was refused: a logout or a login meanwhile stays.
                    let removeIfCurrent = { removeIfStored(baseIdentity) }
                    if locked { removeIfCurrent() } else { relocked(otherwise: { _ in }, removeIfCurrent) }
                }
                owned?.unlock()
                // The refresh's end (its events) first, then the callback it causes.
                complete(result)
                if reauthenticate { reportSessionEnded(error, identities: [held.sessionIdentity, baseIdentity]) }
                return
            }
            complete(result)
        }
    }

    /// What became of a refreshed authentication at the save.
    private enum SaveOutcome {
        /// Saved: use it.
        case saved
        /// The store holds another session (a login meanwhile) or none (a logout): drop it.
        case superseded
        /// Not saved: its save failed, or the store could not be read or its lock taken again
        /// (nobody knows which session it holds, so nothing is saved over it). Use it anyway, as
        /// its refresh token may be the only one the server still accepts, and report the error
        /// after the lock.
        case notSaved(any Error)
    }

    /// Saves `fresh` if the store holds a token this process refreshed away (the one just
    /// refreshed, or an older one whose save was missed): anything else is another session.
    ///
    /// When the store cannot be read or written, tries again after each of `saveRetryPauses`
    /// that ends before `deadline`, unless `release` has expired: a store out of reach for a
    /// moment (a busy write lock, a dropped connection) then still gets the token before the
    /// lock is released.
    private func saveIfCurrent(
        _ fresh: Authentication, retryingUntil deadline: DispatchTime, unless release: LockRelease
    ) -> SaveOutcome {
        var pauses = saveRetryPauses[...]
        while true {
            let outcome = saveIfCurrent(fresh)
            guard case .notSaved(let error) = outcome, !(error is StoreKeptChanging), let next = pauses.popFirst(),
                DispatchTime.now() + next < deadline, !release.hasExpired
            else { return outcome }
            pause(next)
        }
    }

    /// One attempt at ``saveIfCurrent(_:retryingUntil:unless:)``.
    ///
    /// Decided on one reading and written only if the store still holds it: a logout or a login
    /// between the two (which takes no refresh lock) makes the write fail, and the next reading
    /// finds it.
    private func saveIfCurrent(_ fresh: Authentication) -> SaveOutcome {
        for _ in 0..<Self.conditionalWriteAttempts {
            let stored: Authentication?
            let revision: StoredRevision?
            do {
                (stored, revision) = try readRevision()
            } catch {
                return .notSaved(error)
            }
            // User code (the tokens) is read before taking the lock.
            guard let storedIdentity = stored?.sessionIdentity, superseded.withLock({ $0.contains(storedIdentity) })
            else {
                return .superseded
            }
            do {
                if try save(fresh, revision) { return .saved }
            } catch {
                return .notSaved(error)
            }
        }
        // Every reading showed a session this process refreshed away, and every write found the
        // store changed since: someone keeps writing that old session. The result is used, as its
        // refresh token may be the only one the server still accepts, and the next refresh saves it.
        return .notSaved(StoreKeptChanging())
    }

    /// Deletes what is stored if it is still the session `identity` (the one whose refresh was
    /// refused): a logout or a login meanwhile stays. Best effort: a store that cannot be read or
    /// written now keeps what it holds.
    private func removeIfStored(_ identity: String) {
        for _ in 0..<Self.conditionalWriteAttempts {
            guard let (stored, revision) = try? readRevision(), stored?.sessionIdentity == identity,
                let removed = try? remove(revision), !removed
            else { return }
        }
    }

    /// How many times a conditional write is decided again after the store changed between the
    /// reading and the write.
    private static var conditionalWriteAttempts: Int { 3 }

    /// For a refresh that outlived its lock: runs `body` under the lock taken again (waiting at
    /// most a second), so that what is saved or removed is decided and done under it; `otherwise`
    /// when the lock cannot be taken.
    private func relocked<Outcome>(otherwise: (any Error) -> Outcome, _ body: () -> Outcome) -> Outcome {
        let lateLock: (any AuthenticationStoreLock)?
        do {
            lateLock = try lock(1)
        } catch {
            return otherwise(error)
        }
        defer { lateLock?.unlock() }
        return body()
    }

    /// Seconds from now until `deadline`, at least zero.
    private static func seconds(until deadline: DispatchTime) -> TimeInterval {
        let now = DispatchTime.now().uptimeNanoseconds
        let end = deadline.uptimeNanoseconds
        return end > now ? Double(end - now) / 1e9 : 0
    }

    /// Calls `onReauthenticationRequired` with `error`, unless it was called already for one of
    /// the sessions `identities` names.
    private func reportSessionEnded(_ error: any Error, identities: [String]) {
        let first = ended.withLock { ended in
            guard !identities.contains(where: ended.contains) else { return false }
            ended.append(contentsOf: identities)
            if ended.count > 16 { ended.removeFirst(ended.count - 16) }
            return true
        }
        if first { onReauthenticationRequired?(error) }
    }
}

/// Why a refreshed authentication was not saved: the store changed between each reading and the
/// write that followed it.
private struct StoreKeptChanging: TokenFreeError {
    var description: String {
        "The stored authentication changed at every attempt to save the refreshed one over it."
    }
}

/// Releases a store lock once, from whichever path ends the refresh first.
private final class LockRelease: Sendable {
    private enum State {
        /// The lock is not taken yet.
        case waiting
        /// Taken (`nil` for a store without a lock).
        case held((any AuthenticationStoreLock)?)
        /// Released, or taken out by whoever ends the refresh.
        case released
        /// The background time ran out: released if it was held, and a lock taken later is
        /// released at once. Whoever took it out must let it go now.
        case expired
    }

    private let state = Locked(State.waiting)

    /// Whether the background time ran out: whoever holds the lock must let it go now.
    var hasExpired: Bool {
        state.withLock { state in
            if case .expired = state { return true }
            return false
        }
    }

    /// Records the lock just taken; returns `false` (and releases it at once) when ``expire()``
    /// came first.
    func hold(_ lock: (any AuthenticationStoreLock)?) -> Bool {
        let kept = state.withLock { state -> Bool in
            guard case .waiting = state else { return false }
            state = .held(lock)
            return true
        }
        if !kept { lock?.unlock() }
        return kept
    }

    /// The lock, taken out so that the timer no longer releases it; `nil` when the timer did.
    func take() -> (any AuthenticationStoreLock)? {
        state.withLock { state in
            switch state {
            case .held(let lock):
                state = .released
                return lock
            case .waiting:
                state = .released
                return nil
            case .released, .expired:
                return nil
            }
        }
    }

    /// Releases the lock unless it was released or taken already.
    func unlock() {
        take()?.unlock()
    }

    /// Releases the lock now, and any lock taken later at once; tells whoever took it out.
    func expire() {
        let held = state.withLock { state -> (any AuthenticationStoreLock)? in
            defer { state = .expired }
            if case .held(let lock) = state { return lock }
            return nil
        }
        held?.unlock()
    }
}
