import Dispatch

/// The deadlines of the transfers in flight, and when the one timer that watches them all must
/// fire: the decisions of ``TransferDeadlines``, without its lock or timer.
///
/// A timer for each transfer cost more than the rest of the adapter's work around a transfer: on
/// Linux every timer armed and cancelled wakes Dispatch's timer thread. One timer is moved only
/// when a transfer's deadline comes before the one it is set for, which transfers of one session
/// (one resource timeout) never do once it is set; an entry that ends is simply removed, and the
/// timer, when it fires for nothing, sets itself for the earliest deadline left.
struct DeadlineSchedule<Item> {
    private var entries: [UInt64: (deadline: DispatchTime, item: Item)] = [:]
    private var lastID: UInt64 = 0

    /// When the timer is set to fire; `nil` when it is not set.
    private(set) var armedAt: DispatchTime?

    /// The number of entries whose deadline has not passed.
    var count: Int { entries.count }

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
        if let armedAt, armedAt <= deadline { return nil }
        armedAt = deadline
        return deadline
    }

    /// Stops watching the entry `id`. Returns whether it was still watched, `false` when its
    /// deadline passed first (or it was never added).
    mutating func remove(_ id: UInt64) -> Bool {
        entries.removeValue(forKey: id) != nil
    }

    /// The timer fired at `now`: takes the entries whose deadline has passed.
    ///
    /// - Returns: Their items, and the time to set the timer to next (`nil`: no entry is left).
    mutating func fire(now: DispatchTime) -> (expired: [Item], rearm: DispatchTime?) {
        var expired: [Item] = []
        var earliest: DispatchTime?
        for (id, entry) in entries {
            if entry.deadline <= now {
                expired.append(entry.item)
                entries[id] = nil
            } else if earliest.map({ entry.deadline < $0 }) ?? true {
                earliest = entry.deadline
            }
        }
        armedAt = earliest
        return (expired, earliest)
    }
}
