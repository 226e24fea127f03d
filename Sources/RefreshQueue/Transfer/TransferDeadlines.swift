import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cancels the transfers whose deadline passes, with one timer for all of them (see
/// ``DeadlineSchedule`` for why one).
///
/// The timer runs on the library's deadline queue, whose thread blocking code elsewhere cannot
/// take. The tasks are cancelled after the lock is left; their completion handlers then ask
/// ``finish(_:)``, which tells them that the deadline passed.
final class TransferDeadlines: Sendable {
    /// The one instance, shared by every transfer.
    static let shared = TransferDeadlines()

    private let schedule = Locked(DeadlineSchedule<URLSessionTask>())
    private let timer: UncheckedSendable<any DispatchSourceTimer>

    private init() {
        let timer = DispatchSource.makeTimerSource(queue: .refreshQueueDeadlines)
        self.timer = UncheckedSendable(timer)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    /// An identifier for a transfer about to start; pass it to ``watch(_:id:until:)`` and
    /// ``finish(_:)``.
    func makeID() -> UInt64 {
        schedule.withLock { $0.makeID() }
    }

    /// Cancels `task` at `deadline` unless ``finish(_:)`` comes first.
    func watch(_ task: URLSessionTask, id: UInt64, until deadline: DispatchTime) {
        schedule.withLock { schedule in
            // Under the lock, so that two transfers cannot set the timer in the wrong order.
            if let rearm = schedule.add(task, id: id, deadline: deadline) {
                timer.value.schedule(deadline: rearm)
            }
        }
    }

    /// The transfer `id` has ended. Returns `false` when its deadline passed first (its task was
    /// cancelled for that).
    func finish(_ id: UInt64) -> Bool {
        schedule.withLock { $0.remove(id) }
    }

    /// The number of transfers watched now.
    var watchedCount: Int {
        schedule.withLock { $0.count }
    }

    private func fire() {
        let expired = schedule.withLock { schedule in
            let (expired, rearm) = schedule.fire(now: .now())
            timer.value.schedule(deadline: rearm ?? .distantFuture)
            return expired
        }
        for task in expired {
            task.cancel()
        }
    }
}
