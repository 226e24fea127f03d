import Dispatch
import Foundation
import RefreshQueue

/// The refresh of a ``FakeAuthentication``: `refresh()` returns a future that stays pending until
/// the benchmark completes it, so that requests can pile up behind it for as long as wanted.
final class ManualRefresher: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: (@Sendable (Result<FakeAuthentication, any Error>) -> Void)?
    private var calls = 0
    private let started = DispatchSemaphore(value: 0)

    /// Creates a refresher with no refresh started.
    init() {}

    /// Starts a refresh: what `FakeAuthentication.refresh()` returns.
    func begin() -> Future<FakeAuthentication> {
        Future { complete in
            lock.withLock {
                calls += 1
                pending = complete
            }
            started.signal()
        }
    }

    /// Waits until a refresh has started; `false` if none did within `seconds`.
    func waitUntilStarted(seconds: Double) -> Bool {
        started.wait(timeout: .now() + seconds) == .success
    }

    /// Completes the pending refresh with `authentication`; `false` if none was pending.
    @discardableResult
    func complete(with authentication: FakeAuthentication) -> Bool {
        let complete = lock.withLock { () -> (@Sendable (Result<FakeAuthentication, any Error>) -> Void)? in
            defer { pending = nil }
            return pending
        }
        complete?(.success(authentication))
        return complete != nil
    }

    /// How many refreshes have started.
    var callCount: Int {
        lock.withLock { calls }
    }
}
