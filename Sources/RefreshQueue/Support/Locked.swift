#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value that is only ever read or written while holding its own mutex.
///
/// This is the package's one lock type (``SharedLocks`` is a fixed pool of locks for objects too
/// small and short-lived for a mutex of their own). `Synchronization.Mutex` would do the same job but needs
/// iOS 18 / macOS 15, and the package supports iOS 13 / macOS 10.15. The value and the
/// `pthread_mutex_t` live in a single heap allocation (a `ManagedBuffer`), so the mutex has a
/// stable address and taking the lock costs one uncontended `pthread_mutex_lock`. `Locked` itself
/// is a struct holding a reference to that allocation: copies share the same state and mutex.
///
/// Rule of use: never call code you do not own (user callbacks, completions, `refresh()`) inside
/// `withLock`. Copy what you need out, leave the lock, then call.
struct Locked<State>: @unchecked Sendable {
    private let storage: Storage

    init(_ initialState: State) {
        storage = Storage.make(initialState)
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }

    private final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        static func make(_ initialState: State) -> Storage {
            let buffer = Storage.create(minimumCapacity: 1) { _ in initialState }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements(initializeMutex)
            return storage
        }

        @inline(__always)
        func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try withUnsafeMutablePointers { state, mutex in
                pthread_mutex_lock(mutex)
                defer { pthread_mutex_unlock(mutex) }
                return try body(&state.pointee)
            }
        }

        deinit {
            // The header (the state) is destroyed by `ManagedBuffer` itself; the mutex is ours.
            _ = withUnsafeMutablePointerToElements { mutex in
                pthread_mutex_destroy(mutex)
            }
        }
    }
}

/// Sets up `mutex` as a plain (non-recursive, unchecked) mutex: the lock of ``Locked``, and of
/// ``SharedLocks`` on Apple systems.
func initializeMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_NORMAL))
    let status = pthread_mutex_init(mutex, &attributes)
    pthread_mutexattr_destroy(&attributes)
    precondition(status == 0, "pthread_mutex_init failed with \(status)")
}
