/// A fixed set of locks shared by many small, short-lived objects (waiting requests, futures),
/// each guarded by the one its address picks.
///
/// Such objects are created by the thousand and each is touched a few times; a mutex of their own
/// would cost an allocation and more memory than the object itself. Two objects may share a lock,
/// which only means that they sometimes wait for each other for the length of a few assignments.
///
/// Rules of use, on top of ``Locked``'s: a body touches only the state of the object it locked,
/// and never takes another shared lock (two objects' locks may be the same one, or be taken in
/// the other order elsewhere).
enum SharedLocks {
    /// A power of two, so that picking one is a mask.
    private static let count = 64

    /// Each guards a byte it never uses: a `Void` state would share its address with the mutex
    /// stored after it, and the thread sanitizer would take the lock's own memory for the state.
    private static let locks: [Locked<UInt8>] = (0..<count).map { _ in Locked(0) }

    /// Runs `body` holding the lock that guards `object`.
    @inline(__always)
    static func withLock<Result>(for object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
        try locks[index(of: object)].withLock { _ in try body() }
    }

    /// The lock of `object`: heap objects are 16-byte aligned, so the bits above the fourth pick it,
    /// folded so that objects allocated far apart spread too.
    @inline(__always)
    private static func index(of object: AnyObject) -> Int {
        let address = UInt(bitPattern: ObjectIdentifier(object))
        return Int(truncatingIfNeeded: (address >> 4) ^ (address >> 10)) & (count - 1)
    }
}
