import Dispatch
import Foundation

/// A refresh that goes through an ``AuthenticationStore``: what a ``RefreshingRequestClosure``
/// built from a store calls instead of `Authentication.refresh()`.
///
/// With a ``CoordinatedAuthenticationStore`` the whole step runs under the store's lock, which
/// every process sharing the store takes too (with any other store, the same without a lock):
/// 1. take the lock, waiting at most the refresh timeout;
/// 2. load what is stored. Nothing stored means the user logged out (here or in another
///    process): fail with ``RefreshQueueError/notAuthenticated`` rather than log them back in.
///    If another process has refreshed meanwhile (the stored access token differs from the one
///    held here, is still fresh, and is not one this process replaced itself), adopt it;
/// 3. otherwise refresh the newest of the two (the stored one has the newest refresh token should
///    another process have rotated it), save the result if the store still holds what was
///    refreshed (a login or logout meanwhile wins), release the lock.
///
/// The lock is held until the refresh request has ended, so no other process can send the same
/// refresh token meanwhile; to bound the harm of a refresh that never ends, it is released after
/// twice the refresh timeout at most. A refresh that fails with an error that requires
/// re-authentication (`invalid_grant`) removes the stored authentication (if it is still the
/// one refreshed) and calls `onReauthenticationRequired` once for that failure, after the lock
/// is released.
struct StoreBackedRefresh<Authentication: RefreshableAuthentication>: Sendable {
    let load: @Sendable () -> Authentication?
    let save: @Sendable (Authentication) throws -> Void
    let remove: @Sendable () throws -> Void
    /// Takes the store's cross-process lock, which is `nil` for a store only this process uses.
    let lock: @Sendable (TimeInterval) throws -> (any AuthenticationStoreLock)?
    let timeout: TimeInterval
    let onReauthenticationRequired: (@Sendable (any Error) -> Void)?
    let onSaveFailure: @Sendable (any Error) -> Void
    /// Access tokens this process refreshed away: a store still holding one of them missed a save,
    /// and its refresh token may already have been used.
    private let superseded = Locked<[String]>([])

    /// Refreshes through `store`, whose values `decode` turns into authentications and `encode`
    /// back; save failures are reported as ``RefreshEvent/saveFailed(_:)``.
    init<Store: AuthenticationStore>(
        store: Store,
        decode: @escaping @Sendable (Store.Value) -> Authentication,
        encode: @escaping @Sendable (Authentication) -> Store.Value,
        timeout: TimeInterval,
        onReauthenticationRequired: (@Sendable (any Error) -> Void)?,
        onEvent: (@Sendable (RefreshEvent) -> Void)?
    ) {
        load = { store.load().map(decode) }
        save = { try store.save(encode($0)) }
        remove = { try store.remove() }
        lock = { try store.refreshLock(timeout: $0) }
        self.timeout = timeout
        self.onReauthenticationRequired = onReauthenticationRequired
        onSaveFailure = { onEvent?(.saveFailed(RefreshQueueError.summary(of: $0))) }
    }

    /// Refreshes `held` as described above.
    func refresh(_ held: Authentication) -> Future<Authentication> {
        Future { complete in
            // Waiting for the lock and writing the file block a thread: never the closure's
            // queue, never the Swift concurrency pool.
            DispatchQueue.global().async {
                run(held, complete: complete)
            }
        }
    }

    private func run(_ held: Authentication, complete: @escaping @Sendable (Result<Authentication, any Error>) -> Void)
    {
        let storeLock: (any AuthenticationStoreLock)?
        do {
            storeLock = try lock(timeout)
        } catch {
            complete(.failure(error))
            return
        }
        let release = LockRelease(storeLock)
        guard let stored = load() else {
            release.unlock()
            complete(.failure(RefreshQueueError.notAuthenticated))
            return
        }
        // User code (accessToken) is read before taking the lock.
        let storedToken = stored.accessToken
        let storedIsOurs = superseded.withLock { $0.contains(storedToken) }
        if stored.accessToken != held.accessToken, !storedIsOurs, !stored.isRefreshNeeded {
            release.unlock()
            complete(.success(stored))
            return
        }
        let base = storedIsOurs ? held : stored
        // Bound the lock before calling user code, which may block.
        DispatchQueue.global().asyncAfter(deadline: .after(seconds: timeout * 2)) { release.unlock() }
        base.refresh().observe(on: .global()) { result in
            // Take the lock back from the timer: what is saved or removed under it stays under it.
            // Without a store lock (one process only), there is nothing to lose.
            let owned = release.take()
            let locked = storeLock == nil || owned != nil
            let baseToken = base.accessToken
            switch result {
            case .success(let fresh):
                superseded.withLock { superseded in
                    superseded.append(baseToken)
                    if superseded.count > 16 { superseded.removeFirst() }
                }
                // Save only over what was refreshed: another process may have saved meanwhile.
                if locked {
                    if load()?.accessToken == baseToken { saveReporting(fresh) }
                } else {
                    relocking(ifStillHolding: baseToken) { saveReporting(fresh) }
                }
                owned?.unlock()
            case .failure(let error):
                let reauthenticate = Self.requiresReauthentication(error)
                if reauthenticate {
                    if locked {
                        if load()?.accessToken == baseToken { try? remove() }
                    } else {
                        relocking(ifStillHolding: baseToken) { try? remove() }
                    }
                }
                owned?.unlock()
                if reauthenticate { onReauthenticationRequired?(error) }
            }
            complete(result)
        }
    }

    /// For a refresh that outlived its lock: runs `change` under the lock taken again, if the
    /// store still holds the token that was refreshed, so that a rotated refresh token is not lost
    /// and nothing newer is overwritten.
    private func relocking(ifStillHolding token: String, _ change: () -> Void) {
        guard let lateLock = try? lock(1) else { return }
        defer { lateLock.unlock() }
        if load()?.accessToken == token { change() }
    }

    private func saveReporting(_ authentication: Authentication) {
        do {
            try save(authentication)
        } catch {
            onSaveFailure(error)
        }
    }

    private static func requiresReauthentication(_ error: any Error) -> Bool {
        (error as? any ReauthenticationRequiring)?.requiresReauthentication ?? false
    }
}

/// Releases a store lock once, from whichever path ends the refresh first.
private final class LockRelease: Sendable {
    private let lock: Locked<(any AuthenticationStoreLock)?>

    init(_ lock: (any AuthenticationStoreLock)?) {
        self.lock = Locked(lock)
    }

    /// The lock, taken out so that the timer no longer releases it; `nil` when the timer did.
    func take() -> (any AuthenticationStoreLock)? {
        lock.withLock { lock in
            defer { lock = nil }
            return lock
        }
    }

    /// Releases the lock unless it was released or taken already.
    func unlock() {
        take()?.unlock()
    }
}
