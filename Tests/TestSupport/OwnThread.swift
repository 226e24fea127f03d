import Foundation

/// Runs `body` on a thread of its own and returns what it returned.
///
/// For a step whose timing matters: a kill that must land within a fraction of a second of the
/// request it waits for, or the moment a survivor's work shows. A task on the cooperative pool
/// can be resumed seconds late when blocking tests hold the pool's threads on a loaded machine; a
/// thread of its own is scheduled like any other thread.
public func onAThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}

/// Checks `condition` every millisecond on the calling thread until it holds, and returns the
/// uptime just after the check that saw it hold; nil if it did not hold within `timeout` seconds.
/// Blocks the thread: call it from ``onAThreadOfItsOwn(_:)``.
public func uptimeWhen(timeout: TimeInterval = 30, _ condition: () -> Bool) -> TimeInterval? {
    let deadline = ProcessInfo.processInfo.systemUptime + timeout
    while true {
        let holds = condition()
        let now = ProcessInfo.processInfo.systemUptime
        if holds { return now }
        if now >= deadline { return nil }
        Thread.sleep(forTimeInterval: 0.001)
    }
}
