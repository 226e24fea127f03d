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
        let handle = CancellationRelay()
        // One timer watches every transfer's deadline (see `DeadlineSchedule`); nothing to watch
        // without a deadline.
        let watched = deadline.map { _ in TransferDeadlines.shared.makeID() }
        let refusal = refusingRedirects ? RedirectRefusal() : nil
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    // Ends the watch, whatever the outcome, so that nothing stays watched.
                    let timedOut = watched.map { !TransferDeadlines.shared.finish($0) } ?? false
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
                if let deadline, let watched {
                    TransferDeadlines.shared.watch(task, id: watched, until: deadline)
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

/// A transfer's task, as the cancellation handler of ``URLSession/transfer(_:deadline:refusingRedirects:)`` stops it.
extension URLSessionDataTask: RelayedOperation {}
