import Dispatch
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An exclusive `flock` on a ``FileAuthenticationStore``'s lock file, held until ``unlock()``.
///
/// `flock` locks belong to an open file description, so the kernel releases the lock when the
/// last descriptor of it is closed, including when the process dies (even by `kill -9`): a
/// crashed process never leaves the store locked. Two `open`s of the lock file in the same
/// process are two descriptions, so two locks in one process exclude each other just as locks in
/// two processes do. The descriptor is opened with `O_CLOEXEC`, so child processes never
/// inherit the lock.
///
/// `flock` is advisory: it only excludes others that take the same lock. It is reliable on local
/// file systems; on network file systems it may be emulated or ignored.
final class FileStoreLock: AuthenticationStoreLock {
    /// The locked descriptor; nil once unlocked.
    private let descriptor: Locked<Int32?>

    private init(descriptor: Int32) {
        self.descriptor = Locked(descriptor)
    }

    deinit {
        unlock()
    }

    func unlock() {
        // Taken out under the lock, so that only one caller ever closes it: a second close could
        // close a descriptor number reused meanwhile by someone else.
        let taken = descriptor.withLock { descriptor in
            defer { descriptor = nil }
            return descriptor
        }
        guard let taken else { return }
        _ = flock(taken, LOCK_UN)
        _ = close(taken)
    }

    /// Locks the file at `path`, creating it if needed, retrying for up to `timeout` seconds.
    ///
    /// Polls with `LOCK_NB` rather than blocking in `flock`, so that the wait is bounded: 1 ms
    /// between attempts at first, doubling up to 20 ms. After getting the lock it checks that the
    /// file is still the one at `path`; if someone deleted or replaced the lock file meanwhile, a
    /// new one may have been locked by somebody else, so it opens the file again and retries.
    static func acquire(path: String, timeout: TimeInterval) throws -> FileStoreLock {
        let deadline = Deadline(timeout)
        var backoff: UInt64 = 1_000_000
        var replacements = 0
        var descriptor = try StoreFileSystem.openLockFile(atPath: path)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                if StoreFileSystem.isOpen(descriptor, onFileAt: path) {
                    return FileStoreLock(descriptor: descriptor)
                }
                // The lock file was deleted or replaced: the lock we got protects nothing. Open the
                // new file and try again, at once the first few times; after that, wait as for a
                // held lock, so that the deadline still bounds the loop.
                _ = close(descriptor)
                descriptor = try StoreFileSystem.openLockFile(atPath: path)
                replacements += 1
                if replacements < 8 { continue }
            } else {
                let error = errno
                if error == EINTR { continue }
                guard error == EWOULDBLOCK || error == EAGAIN else {
                    _ = close(descriptor)
                    throw AuthenticationStoreError.io(operation: "lock the lock file", errno: error)
                }
            }
            guard let remaining = deadline.remainingNanoseconds() else {
                _ = close(descriptor)
                throw AuthenticationStoreError.lockTimedOut(after: deadline.timeout)
            }
            backOff(nanoseconds: min(backoff, remaining))
            backoff = min(backoff * 2, 20_000_000)
        }
    }

    private static func backOff(nanoseconds: UInt64) {
        var request = timespec(
            tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        // Interrupted sleeps are not resumed: the loop checks the deadline again anyway.
        _ = nanosleep(&request, &remaining)
    }

    /// When the wait for the lock ends, on the monotonic clock.
    private struct Deadline {
        /// The timeout for the error: as given, or 0 when the caller asked to try once.
        let timeout: TimeInterval
        /// Nil when the caller asked to try once.
        private let end: UInt64?

        init(_ timeout: TimeInterval) {
            guard timeout > 0 else {
                // Zero, negative or NaN: try once.
                self.timeout = 0
                end = nil
                return
            }
            self.timeout = timeout
            // Longer than a few years (or infinite) is the same as a few years, and fits in UInt64.
            let nanoseconds = UInt64(saturating: min(timeout, 1e8) * 1e9)
            end = DispatchTime.now().uptimeNanoseconds + nanoseconds
        }

        /// Nanoseconds left until the deadline, or nil when it has passed.
        func remainingNanoseconds() -> UInt64? {
            guard let end else { return nil }
            let now = DispatchTime.now().uptimeNanoseconds
            return now < end ? end - now : nil
        }
    }
}
