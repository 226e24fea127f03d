import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// A data task as an `async` call, on every OS version the package supports, cancelled with
    /// the calling task.
    ///
    /// - Parameters:
    ///   - deadline: When given, the task is cancelled at that moment and the call throws
    ///     `URLError(.timedOut)`. URLSession's own `timeoutIntervalForResource` is not enforced on
    ///     Linux (a body dripped one byte a second runs on), so a bound must be enforced here.
    ///   - refusingRedirects: Return a 3xx answer instead of following it (see ``RedirectRefusal``).
    ///     On Linux, a 401 with an HTTP authentication challenge is then returned without its body
    ///     instead of suspending the task forever.
    func transfer(
        _ request: URLRequest, deadline: DispatchTime? = nil, refusingRedirects: Bool = false
    ) async throws -> (Data, URLResponse) {
        let handle = CancellationRelay<URLSessionDataTask>()
        // The task, until it ends or the deadline passes, whichever comes first; nothing to watch
        // (and no lock to allocate) without a deadline.
        let watch = deadline.map { _ in Locked(DeadlineWatch.running(nil)) }
        // A timer source, not `asyncAfter`: cancelled when the task ends, it lets go of what it
        // holds then, not days later when a long deadline (a resource timeout) would pass.
        let timer = deadline.map { _ in
            UncheckedSendable(DispatchSource.makeTimerSource(queue: .refreshQueueDeadlines))
        }
        let refusal = refusingRedirects ? RedirectRefusal() : nil
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    let timedOut =
                        watch?.withLock { watch in
                            defer { watch = .ended }
                            if case .timedOut = watch { return true }
                            return false
                        } ?? false
                    timer?.value.cancel()
                    if let error {
                        let wasCancelled = (error as? URLError)?.code == .cancelled
                        if wasCancelled && timedOut {
                            continuation.resume(throwing: URLError(.timedOut))
                        } else if wasCancelled && handle.isCancelled {
                            continuation.resume(throwing: CancellationError())
                        } else if wasCancelled, let challenged = refusal?.challengedResponse {
                            // Linux: the delegate refused an authentication challenge, which cancels
                            // the task; the answer itself is the result (its body is gone).
                            continuation.resume(returning: (Data(), challenged))
                        } else {
                            continuation.resume(throwing: error)
                        }
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                if let deadline, let watch, let timer {
                    watch.withLock { $0 = .running(task) }
                    timer.value.setEventHandler {
                        let expired: URLSessionDataTask? = watch.withLock { watch in
                            guard case .running(let task) = watch else { return nil }
                            watch = .timedOut
                            return task
                        }
                        expired?.cancel()
                    }
                    timer.value.schedule(deadline: deadline)
                    timer.value.resume()
                }
                refusal?.install(on: task)
                if !handle.start(task) { task.cancel() }
                task.resume()
            }
        } onCancel: {
            handle.cancel()?.cancel()
        }
    }
}

/// Where a transfer with a deadline stands.
private enum DeadlineWatch: @unchecked Sendable {
    /// Under way (the task, once created).
    case running(URLSessionDataTask?)
    /// The deadline passed first: the task was cancelled.
    case timedOut
    /// The task ended first.
    case ended
}
