import Foundation

/// A store that several processes (or machines) can share, with a lock that lets one of them
/// refresh at a time.
///
/// An app and its extensions (a widget, a share extension) or several command-line processes may
/// read the same stored authentication. If two of them refresh a rotating refresh token at once,
/// the server sees the old token twice and may revoke the whole token family. Take the store's
/// lock around "load, refresh if still needed, save": whoever gets it second loads the token the
/// first one saved and does not refresh again.
///
/// ```swift
/// func refreshed(_ stale: SpotifyAuthentication) async throws -> SpotifyAuthentication {
///     let lock = try store.lock(timeout: 10)  // blocks this thread while another process refreshes
///     defer { lock.unlock() }
///     // Whoever held the lock before may have refreshed already: use its result.
///     if let current = store.load(), !current.isRefreshNeeded { return current }
///     let fresh = try await stale.refresh().value
///     try store.save(fresh)
///     return fresh
/// }
/// ```
public protocol CoordinatedAuthenticationStore<Value>: AuthenticationStore {
    /// Takes an exclusive lock shared with every other user of the same store, waiting at most
    /// `timeout` seconds.
    ///
    /// The lock is held until ``AuthenticationStoreLock/unlock()`` is called or the returned
    /// object is released. The calling thread blocks while it waits: do not call this on the main
    /// thread with a long timeout.
    ///
    /// - Parameter timeout: The longest wait in seconds. Zero or less (or NaN) tries once.
    /// - Throws: ``AuthenticationStoreError/lockTimedOut(after:)`` when the lock is still taken
    ///   after `timeout` (`after: 0` when it tried once); other ``AuthenticationStoreError``s when the lock cannot be taken at all.
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock
}

extension CoordinatedAuthenticationStore {
    /// The store's ``lock(timeout:)``: refreshes through this store are coordinated.
    public func refreshLock(timeout: TimeInterval) throws -> (any AuthenticationStoreLock)? {
        try lock(timeout: timeout)
    }
}
