#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Frees the callbacks of futures that were dropped before they completed, one at a time.
///
/// Each pending future of a `map`/`flatMap` chain is referenced only by the callback of the
/// stage before it. Dropping the head of a long, never-completed chain (a hung request, say)
/// would free stage after stage through nested deinitializers, one stack frame group per stage.
/// Instead, a deinitializer hands its callbacks to this thread's release loop: the outermost
/// deinitializer runs the loop, the nested ones only append, and the stack stays flat.
enum AbandonedCallbacks {
    /// Takes the callbacks that `take` returns and frees them, iteratively.
    static func release<Callbacks: Collection>(_ take: () -> Callbacks) {
        if let active = ReleaseLoop.current {
            active.append(take())
            return
        }
        let loop = ReleaseLoop()
        loop.append(take())
        loop.run()
    }
}

/// The release loop running on the current thread, if any.
private final class ReleaseLoop {
    private var pending: [Any] = []

    static var current: ReleaseLoop? {
        guard let pointer = pthread_getspecific(threadKey) else { return nil }
        return Unmanaged<ReleaseLoop>.fromOpaque(pointer).takeUnretainedValue()
    }

    func append<Callbacks: Collection>(_ callbacks: Callbacks) {
        guard !callbacks.isEmpty else { return }
        pending.append(callbacks)
    }

    func run() {
        guard !pending.isEmpty else { return }
        pthread_setspecific(threadKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(threadKey, nil) }
        // Each popped list is freed at the end of its iteration; the futures it frees append
        // their own callbacks here instead of freeing them recursively.
        while let callbacks = pending.popLast() {
            _ = callbacks
        }
    }
}

/// The thread-specific slot that tells a deinitializer whether a release loop is running.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
