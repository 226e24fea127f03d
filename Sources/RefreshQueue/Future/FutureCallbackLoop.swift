#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs the callbacks of futures that complete, one at a time, from a loop rather than by nested
/// calls, so that a chain of any length completes, or fails when abandoned, without growing the
/// stack.
///
/// The first completion on a thread starts the loop there. A callback it runs may complete other
/// futures (the next stage of a chain), and may release pending ones, which then fail as
/// abandoned: their callbacks are not run inside it, but as soon as it returns, before the next
/// callback of its own future. Those of the futures it abandoned come first, in the order it
/// abandoned them, then those of the futures it completed, in order, each depth first.
enum FutureCallbackLoop {
    /// A callback with the result it receives.
    typealias Work = () -> Void

    /// Runs `work` in order now, or, inside a callback the loop runs on this thread, right after
    /// that callback returns.
    static func run(_ work: [Work], abandoned: Bool) {
        guard !work.isEmpty else { return }
        if let loop = Loop.current {
            if abandoned {
                loop.abandoned.append(work)
            } else {
                loop.completed.append(work)
            }
            return
        }
        Loop().run(work)
    }

    private final class Loop {
        /// What the callback running now made due, each list in order.
        var abandoned: [[Work]] = []
        var completed: [[Work]] = []

        static var current: Loop? {
            guard let pointer = pthread_getspecific(threadKey) else { return nil }
            return Unmanaged<Loop>.fromOpaque(pointer).takeUnretainedValue()
        }

        func run(_ first: [Work]) {
            pthread_setspecific(threadKey, Unmanaged.passUnretained(self).toOpaque())
            defer { pthread_setspecific(threadKey, nil) }
            // Lists still to run, the next on top; each list reversed, its next callback last.
            var waiting: [[Work]] = [first.reversed()]
            while var list = waiting.popLast() {
                guard let work = list.popLast() else { continue }
                if !list.isEmpty { waiting.append(list) }
                // Taken out of every list first: what the callback holds goes when it returns.
                work()
                waiting += completed.reversed().map { $0.reversed() }
                waiting += abandoned.reversed().map { $0.reversed() }
                completed.removeAll()
                abandoned.removeAll()
            }
        }
    }
}

/// The thread-specific slot that tells a completion whether the loop runs on this thread.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
}()
