import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// A data task as an `async` call, on every OS version the package supports, cancelled with
    /// the calling task.
    func transfer(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let handle = CancellationRelay<URLSessionDataTask>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        let cancelled = (error as? URLError)?.code == .cancelled && handle.isCancelled
                        continuation.resume(throwing: cancelled ? CancellationError() : error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                if !handle.start(task) { task.cancel() }
                task.resume()
            }
        } onCancel: {
            handle.cancel()?.cancel()
        }
    }
}
