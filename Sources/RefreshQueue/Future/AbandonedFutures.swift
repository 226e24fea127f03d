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
/// this thread instead of starting a nested one, so the stack stays flat however long the chain,
/// and the loop runs them as soon as the callback that released them returns.
enum AbandonedFutures {
    /// Runs `continuations`, or queues them behind the callback that the loop already running on
    /// this thread is running.
    static func fail(_ continuations: FutureContinuations) {
        guard let due = continuations.due else { return }
        if let active = FailureLoop.current {
            active.abandoned.append(due)
            return
        }
        FailureLoop().run(from: due)
    }
}

/// The failure loop running on the current thread, if any.
private final class FailureLoop {
    /// The futures that the callback running now abandoned, in the order it abandoned them.
    var abandoned: [any FutureDueCallbacks] = []

    static var current: FailureLoop? {
        guard let pointer = pthread_getspecific(threadKey) else { return nil }
        return Unmanaged<FailureLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs the callbacks of `first` and every callback they make due, depth first, as
    /// ``FutureContinuations/run()`` does. The futures a callback abandons run as soon as it
    /// returns, in the order it abandoned them; then what it completed, then the next callback of
    /// its own future.
    func run(from first: any FutureDueCallbacks) {
        pthread_setspecific(threadKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(threadKey, nil) }
        var current = first
        // What is still to run, the next on top.
        var waiting: [any FutureDueCallbacks] = []
        while true {
            let (produced, more) = current.runNextDue()
            if more { waiting.append(current) }
            if let next = produced.due { waiting.append(next) }
            // The first abandoned goes on top.
            while let dropped = abandoned.popLast() { waiting.append(dropped) }
            guard let next = waiting.popLast() else { return }
            current = next
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
