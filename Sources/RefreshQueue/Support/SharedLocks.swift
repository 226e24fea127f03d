#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if !canImport(Darwin) && canImport(Synchronization)
import Synchronization
#endif

/// A fixed set of locks shared by many small, short-lived objects (futures, the cancellation hand-off
/// of an `async` request that waits and of each transfer, each transfer's redirect guard, the
/// record of cancelled requests), each guarded by the one its address picks.
///
/// Such objects are created by the thousand and each is touched a few times; a mutex of their own
/// would cost an allocation and more memory than the object itself. Two objects may share a lock,
/// which only means that they sometimes wait for each other for the length of a few assignments.
///
/// The mutexes live in one buffer that is never freed, rather than in ``Locked`` values: taking a
/// lock then touches no reference count (a `Locked` in an array was retained and released around
/// every use, two more atomic operations on a line that every thread shares), and `withLock` can be
/// inlined into the generic code of futures, which are specialized in the modules that use them.
///
/// Rules of use, on top of ``Locked``'s: a body touches only the state of the object it locked,
/// and never takes another shared lock (two objects' locks may be the same one, or be taken in
/// the other order elsewhere).
@usableFromInline
enum SharedLocks {
    /// A power of two, so that picking one is a mask.
    @usableFromInline static let count = 64

    /// Bytes between two mutexes: each has a cache line of its own (128 bytes on Apple silicon),
    /// so that threads taking different locks do not slow each other down.
    @usableFromInline static let stride = 128

    /// `count` mutexes, `stride` bytes apart, initialized once and never destroyed. Unchecked: the
    /// pointer is written once, by the lazy initialization; the mutexes are what makes everything
    /// else safe.
    @usableFromInline nonisolated(unsafe) static let mutexes: UnsafeMutableRawPointer = {
        precondition(MemoryLayout<pthread_mutex_t>.size <= stride, "a mutex fits its slot")
        let mutexes = UnsafeMutableRawPointer.allocate(byteCount: count * stride, alignment: stride)
        for index in 0..<count {
            let mutex = (mutexes + index * stride).bindMemory(to: pthread_mutex_t.self, capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            initializeMutex(mutex)
        }
        return mutexes
    }()

    #if !canImport(Darwin) && canImport(Synchronization)
    /// The address of ``mutexes`` once a thread has read it, `0` before: a global initialized with
    /// a constant, which needs no lazy initialization. Reading ``mutexes`` itself goes through the
    /// runtime's once-only initialization on every use, a call into the runtime that cost more than
    /// the rest of taking the lock (a future's stage takes two). Published with release and read
    /// with acquire ordering, so a thread that reads the address also sees the mutexes it set up.
    ///
    /// Not on Apple systems, where `Atomic` needs iOS 18 and macOS 15: there every use reads
    /// ``mutexes``.
    @usableFromInline static let publishedAddress = Atomic<UInt>(0)
    #endif

    /// The address of ``mutexes``.
    @inlinable
    static var base: UnsafeMutableRawPointer {
        #if !canImport(Darwin) && canImport(Synchronization)
        if let known = UnsafeMutableRawPointer(bitPattern: publishedAddress.load(ordering: .acquiring)) {
            return known
        }
        return publish()
        #else
        return mutexes
        #endif
    }

    #if !canImport(Darwin) && canImport(Synchronization)
    /// Reads ``mutexes`` (setting them up the first time) and publishes their address.
    @usableFromInline
    static func publish() -> UnsafeMutableRawPointer {
        let mutexes = mutexes
        publishedAddress.store(UInt(bitPattern: mutexes), ordering: .releasing)
        return mutexes
    }
    #endif

    /// Runs `body` holding the lock that guards `object`.
    @inlinable
    static func withLock<Result>(for object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        let mutex = (base + index(of: object) * stride).assumingMemoryBound(to: pthread_mutex_t.self)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// The lock of `object`: heap objects are 16-byte aligned, so the bits above the fourth pick it,
    /// folded so that objects allocated far apart spread too.
    @inlinable
    static func index(of object: AnyObject) -> Int {
        let address = UInt(bitPattern: ObjectIdentifier(object))
        return Int(truncatingIfNeeded: (address >> 4) ^ (address >> 10)) & (count - 1)
    }
}
