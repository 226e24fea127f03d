#if os(Linux)
import Foundation
import SpotifyStub
import TestSupport

/// The worker that held the refresh lock, killed with SIGKILL mid-refresh: its index among the
/// workers, and the uptime just before the kill.
struct KilledLockHolder: Sendable {
    let index: Int
    let at: TimeInterval
}

/// Why no lock holder was killed.
enum LockHolderKillFailure: Error {
    /// No token request after the first `seen` reached the stub in time.
    case noRefreshCame
    /// The lock was held by no worker (`holder` is nil when nobody held it): the refresh had
    /// already ended, or someone else held it.
    case noWorkerHoldsTheLock(holder: Int32?)
}

/// Waits for a token request after the first `seen` to reach `stub`, then kills the worker that
/// `holder()` names as the refresh lock's holder. `seen` is counted before the refresh can
/// start: workers launched just before may already have sent theirs.
///
/// Both happen on a thread of their own: the refresh ends a fraction of a second after its
/// request, and a task can be resumed later than that on a loaded machine.
func killTheRefreshLockHolder(
    after seen: Int, on stub: SpotifyStub, among workers: [ChildWorker],
    holder: @escaping @Sendable () -> Int32?
) async -> Result<KilledLockHolder, LockHolderKillFailure> {
    await onAThreadOfItsOwn {
        guard uptimeWhen({ stub.counters.tokenRequests > seen }) != nil else { return .failure(.noRefreshCame) }
        let pid = holder()
        guard let index = workers.firstIndex(where: { $0.pid == pid }) else {
            return .failure(.noWorkerHoldsTheLock(holder: pid))
        }
        let at = ProcessInfo.processInfo.systemUptime
        workers[index].kill()
        return .success(KilledLockHolder(index: index, at: at))
    }
}
#endif
