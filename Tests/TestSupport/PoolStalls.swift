import Foundation

/// Runs `body` while a task on the cooperative pool wakes every 2 ms, and returns the longest any
/// wake-up came late: how long a task that was ready to run waited for a thread meanwhile.
///
/// A test whose claim holds only at a normal pace (a token signed with 0.2 s to live reaches the
/// server in time) can tell from it whether the machine kept that pace. On two cores, with
/// blocking tests holding the pool's threads, a ready task waits a quarter of a second and more;
/// at a normal pace it waits a few milliseconds.
public func measuringPoolStalls<Result: Sendable>(
    _ body: () async -> Result
) async -> (result: Result, longestStall: TimeInterval) {
    let running = Protected(true)
    let sampler = Task {
        var longest: TimeInterval = 0
        while running.current {
            let start = ProcessInfo.processInfo.systemUptime
            try? await Task.sleep(nanoseconds: 2_000_000)
            longest = max(longest, ProcessInfo.processInfo.systemUptime - start - 0.002)
        }
        return longest
    }
    let result = await body()
    running.withLock { $0 = false }
    return (result, await sampler.value)
}
