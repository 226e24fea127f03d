import Foundation

/// A value that is only read or written while holding its own lock.
///
/// The stub is touched from three sides at once: the event-loop thread answering requests, the
/// test or example code turning knobs, and whoever calls `stop()`. Everything they share lives in
/// one of these, so there is exactly one rule to follow: never block or call out while holding it.
final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
