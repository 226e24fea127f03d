/// A held lock of a ``CoordinatedAuthenticationStore``.
///
/// Returned by ``CoordinatedAuthenticationStore/lock(timeout:)``. Release it as soon as the
/// refresh it guards has been saved: every other user of the store waits meanwhile.
public protocol AuthenticationStoreLock: AnyObject, Sendable {
    /// Releases the lock.
    ///
    /// Idempotent and safe to call from any thread: only the first call releases, later calls do
    /// nothing (they never release a lock taken since by someone else). Releasing the last
    /// reference to the lock object also unlocks.
    func unlock()
}
