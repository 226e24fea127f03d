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
/// The locks live in one buffer that is never freed, rather than in ``Locked`` values: taking a
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

    /// Bytes between two locks: each has a cache line of its own (128 bytes on Apple silicon),
    /// so that threads taking different locks do not slow each other down.
    @usableFromInline static let stride = 128

    /// `count` locks, `stride` bytes apart, initialized once and never destroyed. Unchecked: the
    /// pointer is written once, by the lazy initialization; the locks are what makes everything
    /// else safe.
    ///
    /// On Apple systems each lock is a `pthread_mutex_t`. Elsewhere it is one atomic word, `0` when
    /// free and `1` when held: taken by a compare-and-exchange, released by a plain store. A
    /// mutex's release is a second atomic operation (an exchange, to find threads asleep on it),
    /// and glibc skips both only while a process has a single thread: once an app has started any
    /// other thread, the mutexes' atomic operations took about a tenth of a chain of three `map`
    /// stages. A body holds the lock for a few assignments and never calls code it does not own,
    /// so a thread that finds it taken spins briefly, then yields its processor until it is free.
    @usableFromInline nonisolated(unsafe) static let locks: UnsafeMutableRawPointer = {
        let locks = UnsafeMutableRawPointer.allocate(byteCount: count * stride, alignment: stride)
        for index in 0..<count {
            #if !canImport(Darwin) && canImport(Synchronization)
            (locks + index * stride).bindMemory(to: Atomic<UInt32>.self, capacity: 1).initialize(to: Atomic(0))
            #else
            precondition(MemoryLayout<pthread_mutex_t>.size <= stride, "a mutex fits its slot")
            let mutex = (locks + index * stride).bindMemory(to: pthread_mutex_t.self, capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            initializeMutex(mutex)
            #endif
        }
        return locks
    }()

    #if !canImport(Darwin) && canImport(Synchronization)
    /// The address of ``locks`` once a thread has read it, `0` before: a global initialized with
    /// a constant, which needs no lazy initialization. Reading ``locks`` itself goes through the
    /// runtime's once-only initialization on every use, a call into the runtime that cost more than
    /// the rest of taking the lock (a future's stage takes two). Published with release and read
    /// with acquire ordering, so a thread that reads the address also sees the locks it set up.
    ///
    /// Not on Apple systems, where `Atomic` needs iOS 18 and macOS 15: there every use reads
    /// ``locks``.
    @usableFromInline static let publishedAddress = Atomic<UInt>(0)
    #endif

    /// The address of ``locks``.
    @inlinable
    static var base: UnsafeMutableRawPointer {
        #if !canImport(Darwin) && canImport(Synchronization)
        if let known = UnsafeMutableRawPointer(bitPattern: publishedAddress.load(ordering: .acquiring)) {
            return known
        }
        return publish()
        #else
        return locks
        #endif
    }

    #if !canImport(Darwin) && canImport(Synchronization)
    /// Reads ``locks`` (setting them up the first time) and publishes their address.
    @usableFromInline
    static func publish() -> UnsafeMutableRawPointer {
        let locks = locks
        publishedAddress.store(UInt(bitPattern: locks), ordering: .releasing)
        return locks
    }

    /// Waits until `lock` is free, then takes it: a few reads first (the holder is usually a few
    /// assignments from done), then a yield of the processor between reads, so that a holder
    /// that was preempted gets to run.
    @usableFromInline
    static func take(_ lock: UnsafeMutablePointer<Atomic<UInt32>>) {
        var reads = 0
        while true {
            if lock.pointee.load(ordering: .relaxed) == 0,
                lock.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
            {
                return
            }
            reads += 1
            if reads > 100 { sched_yield() }
        }
    }
    #endif

    /// Runs `body` holding the lock that guards `object`.
    @inlinable
    static func withLock<Result>(for object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        #if !canImport(Darwin) && canImport(Synchronization)
        let lock = (base + index(of: object) * stride).assumingMemoryBound(to: Atomic<UInt32>.self)
        if !lock.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            take(lock)
        }
        defer { lock.pointee.store(0, ordering: .releasing) }
        #else
        let mutex = (base + index(of: object) * stride).assumingMemoryBound(to: pthread_mutex_t.self)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #endif
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
