import Dispatch
import Foundation

/// Runs async work from the synchronous top level and waits for it.
///
/// The work runs in a detached task, on the global executor: the nonisolated async functions it
/// calls (such as `authorize(_:) async`) then run without any actor hop, as they do in an app.
enum AsyncBridge {
    /// Runs `body` and returns what it returns, or throws what it throws.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                box.store(.success(try await body()))
            } catch {
                box.store(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try box.take()
    }
}

/// The result of an async run, handed from its task to the waiting thread.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    /// Keeps the result of the run.
    func store(_ result: Result<T, any Error>) {
        lock.withLock { self.result = result }
    }

    /// The value of the run, or its error.
    func take() throws -> T {
        guard let result = lock.withLock({ result }) else {
            throw BenchmarkError("an async run ended without a result")
        }
        return try result.get()
    }
}
