// expect: OSAllocatedUnfairLock
import os

final class Counter: Sendable {
    private let count = OSAllocatedUnfairLock(initialState: 0)

    func increment() {
        count.withLock { $0 += 1 }
    }
}
