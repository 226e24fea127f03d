import Dispatch

/// The deadlines of the transfers in flight, and when the one timer that watches them all must
/// fire: the decisions of ``TransferDeadlines``, without its lock or timer.
///
/// A timer for each transfer cost more than the rest of the adapter's work around a transfer: on
/// Linux every timer armed and cancelled wakes Dispatch's timer thread. One timer is moved only
/// when a transfer's deadline comes before the one it is set for, which transfers of one session
/// (one resource timeout) never do once it is set; an entry that ends is simply removed, and the
/// timer, when it fires for nothing, sets itself for the earliest deadline left.
///
/// The deadlines wait in a binary heap, earliest on top, so that a firing costs O(log n) for
/// each entry it takes, not a walk through every transfer in flight (thousands, for a server, each
/// firing under the lock that every transfer's start and end takes). An entry that ends leaves
/// its place in the heap, skipped when it comes to the top; the heap is rebuilt once such places
/// outnumber the entries.
struct DeadlineSchedule<Item> {
    private var entries: [UInt64: (deadline: DispatchTime, item: Item)] = [:]
    /// Every entry's deadline and identifier, earliest on top (at 0), and places left by entries
    /// that ended: a place is live only while `entries` holds its identifier with that deadline.
    private var heap: [(deadline: DispatchTime, id: UInt64)] = []
    private var lastID: UInt64 = 0

    /// When the timer is set to fire; `nil` when it is not set.
    private(set) var armedAt: DispatchTime?

    /// The number of entries whose deadline has not passed.
    var count: Int { entries.count }

    /// The places in the heap, live or left by entries that ended.
    var heapPlaces: Int { heap.count }

    /// A new identifier for an entry to add.
    mutating func makeID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    /// Watches `item` until `deadline`, under `id` (from ``makeID()``).
    ///
    /// - Returns: The time to set the timer to, when it must fire earlier than it is set to.
    mutating func add(_ item: Item, id: UInt64, deadline: DispatchTime) -> DispatchTime? {
        entries[id] = (deadline, item)
        heap.append((deadline, id))
        siftUp(heap.count - 1)
        if let armedAt, armedAt <= deadline { return nil }
        armedAt = deadline
        return deadline
    }

    /// Stops watching the entry `id`. Returns whether it was still watched, `false` when its
    /// deadline passed first (or it was never added).
    mutating func remove(_ id: UInt64) -> Bool {
        guard entries.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64, heap.count > 2 * entries.count {
            // Most places are left: keep only the live ones (each removal pays for two).
            heap = entries.map { ($0.value.deadline, $0.key) }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        }
        return true
    }

    /// The timer fired at `now`: takes the entries whose deadline has passed.
    ///
    /// - Returns: Their items, and the time to set the timer to next (`nil`: no entry is left).
    mutating func fire(now: DispatchTime) -> (expired: [Item], rearm: DispatchTime?) {
        var expired: [Item] = []
        while let top = heap.first {
            let isLive = entries[top.id]?.deadline == top.deadline
            guard top.deadline <= now || !isLive else { break }
            removeTop()
            if isLive, let entry = entries.removeValue(forKey: top.id) { expired.append(entry.item) }
        }
        armedAt = heap.first?.deadline
        return (expired, armedAt)
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var earliest = parent
            let left = 2 * parent + 1
            if left < heap.count, heap[left].deadline < heap[earliest].deadline { earliest = left }
            if left + 1 < heap.count, heap[left + 1].deadline < heap[earliest].deadline { earliest = left + 1 }
            guard earliest != parent else { return }
            heap.swapAt(parent, earliest)
            parent = earliest
        }
    }
}
