import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// A data task as an `async` call, on every OS version the package supports, cancelled with
    /// the calling task.
    func transfer(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = Locked(TransferHandle.notStarted)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        let cancelled =
                            (error as? URLError)?.code == .cancelled
                            && handle.withLock { if case .cancelled = $0 { return true } else { return false } }
                        continuation.resume(throwing: cancelled ? CancellationError() : error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let cancelledAlready = handle.withLock { handle -> Bool in
                    if case .cancelled = handle { return true }
                    handle = .started(task)
                    return false
                }
                if cancelledAlready { task.cancel() }
                task.resume()
            }
        } onCancel: {
            let task = handle.withLock { handle -> URLSessionDataTask? in
                defer { handle = .cancelled }
                if case .started(let task) = handle { return task }
                return nil
            }
            task?.cancel()
        }
    }
}

/// The data task of a transfer, for cancellation that may come before or after it starts.
private enum TransferHandle: @unchecked Sendable {
    case notStarted
    case started(URLSessionDataTask)
    case cancelled
}
