import Dispatch
import Foundation

/// A refresh that goes through an ``AuthenticationStore``: what a ``RefreshingRequestClosure``
/// built from a store calls instead of `Authentication.refresh()`.
///
/// With a ``CoordinatedAuthenticationStore`` the whole step runs under the store's lock, which
/// every process sharing the store takes too (with any other store, the same without a lock):
/// 1. take the lock, waiting at most the refresh timeout;
/// 2. load what is stored: if another process has refreshed meanwhile (the stored access token
///    differs from the one held here and is still fresh), adopt it and do not refresh;
/// 3. otherwise refresh the stored authentication (its refresh token is the newest one, should
///    another process have rotated it), save the result, release the lock.
///
/// A refresh that fails with an error that requires re-authentication (`invalid_grant`) removes
/// the stored authentication and calls `onReauthenticationRequired` once for that failure.
struct StoreBackedRefresh<Authentication: RefreshableAuthentication>: Sendable {
    let load: @Sendable () -> Authentication?
    let save: @Sendable (Authentication) throws -> Void
    let remove: @Sendable () throws -> Void
    /// Takes the store's cross-process lock, which is `nil` for a store only this process uses.
    let lock: @Sendable (TimeInterval) throws -> (any AuthenticationStoreLock)?
    let timeout: TimeInterval
    let onReauthenticationRequired: (@Sendable (any Error) -> Void)?
    let onSaveFailure: @Sendable (any Error) -> Void

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
            // Waiting for the lock blocks a thread: never the closure's queue.
            DispatchQueue.global().async {
                run(held, complete: complete)
            }
        }
    }

    private func run(_ held: Authentication, complete: @escaping @Sendable (Result<Authentication, any Error>) -> Void)
    {
        let heldLock: (any AuthenticationStoreLock)?
        do {
            heldLock = try lock(timeout)
        } catch {
            complete(.failure(error))
            return
        }
        let stored = load()
        if let stored, stored.accessToken != held.accessToken, !stored.isRefreshNeeded {
            heldLock?.unlock()
            complete(.success(stored))
            return
        }
        let base = stored ?? held
        let release = LockRelease(heldLock)
        // The lock must not outlive the refresh timeout: other processes would wait for a refresh
        // this process has already given up on.
        let refreshing = base.refresh()
        let bounded = refreshing.timeout(after: timeout, error: RefreshQueueError.refreshTimedOut)
        bounded.observe { result in
            switch result {
            case .success(let fresh):
                saveReporting(fresh)
            case .failure(let error):
                if Self.requiresReauthentication(error) {
                    try? remove()
                    onReauthenticationRequired?(error)
                }
            }
            release.unlock()
            complete(result)
        }
        // A refresh that succeeds after its timeout is saved if nobody refreshed meanwhile, so a
        // rotated refresh token is not lost.
        refreshing.observe { result in
            guard case .success(let fresh) = result, case .failure = bounded.result else { return }
            let lateLock = try? lock(1)
            defer { lateLock?.unlock() }
            if load()?.accessToken == base.accessToken { saveReporting(fresh) }
        }
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

    func unlock() {
        let held = lock.withLock { lock in
            defer { lock = nil }
            return lock
        }
        held?.unlock()
    }
}
