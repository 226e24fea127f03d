#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells the observers of abandoned futures that they failed, one stage at a time.
///
/// A future is abandoned when it is released pending, or when the `complete` function of its body
/// is released uncalled. Its callbacks then run with ``FutureError/abandoned`` on the releasing
/// thread. Running them may release further pending futures (the next stages of a chain, futures
/// an observer held): their deinitializers hand their callbacks to the loop already running on
/// this thread instead of starting a nested one, so the stack stays flat however long the chain.
enum AbandonedFutures {
    /// Runs `continuations`, or queues them behind the loop already running on this thread.
    static func fail(_ continuations: FutureContinuations) {
        if continuations.isEmpty { return }
        if let active = FailureLoop.current {
            active.append(continuations)
            return
        }
        let loop = FailureLoop()
        loop.append(continuations)
        loop.run()
    }
}

/// The failure loop running on the current thread, if any.
private final class FailureLoop {
    private var pending: [FutureContinuations] = []

    static var current: FailureLoop? {
        guard let pointer = pthread_getspecific(threadKey) else { return nil }
        return Unmanaged<FailureLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    func append(_ continuations: FutureContinuations) {
        pending.append(continuations)
    }

    func run() {
        pthread_setspecific(threadKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(threadKey, nil) }
        // Each popped batch runs (and is freed) before the next; what it abandons is appended.
        while let continuations = pending.popLast() {
            continuations.run()
        }
    }
}

/// The thread-specific slot that tells a deinitializer whether a failure loop is running.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
