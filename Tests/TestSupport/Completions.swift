import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects completions by index, records any index completed twice, and lets a test await a count.
public final class Completions<Value: Sendable>: Sendable {
    private struct State {
        public var results: [Int: Value] = [:]
        public var order: [Int] = []
        public var duplicates: [Int] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Protected(State())

    public init() {}

    /// Records the completion of request `index`.
    public func record(_ index: Int, _ value: Value) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            if state.results[index] != nil {
                state.duplicates.append(index)
                return []
            }
            state.results[index] = value
            state.order.append(index)
            let count = state.results.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `count` distinct completions arrived; fails the test after `timeout` seconds.
    @discardableResult
    public func wait(for count: Int, timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation)
        async
        -> Bool
    {
        let arrived = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let done = self.state.withLock { state -> Bool in
                        if state.results.count >= count { return true }
                        state.waiters.append((count, continuation))
                        return false
                    }
                    if done { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Unblock the waiting child so the group can end.
                let waiters = self.state.withLock { state in
                    defer { state.waiters.removeAll() }
                    return state.waiters.map(\.continuation)
                }
                for waiter in waiters { waiter.resume() }
            }
            group.cancelAll()
            return first
        }
        #expect(
            arrived, "only \(self.count) of \(count) completions arrived in \(timeout) s",
            sourceLocation: sourceLocation)
        return arrived
    }

    public var count: Int { state.withLock { $0.results.count } }
    public var results: [Int: Value] { state.withLock { $0.results } }
    public var order: [Int] { state.withLock { $0.order } }
    public var duplicates: [Int] { state.withLock { $0.duplicates } }
}
