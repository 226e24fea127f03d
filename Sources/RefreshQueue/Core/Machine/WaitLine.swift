import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request waiting in the refresh state machine: the request, its completion handler, its
/// place in arrival order and when it began to wait. The line keeps it as it is, in one slot: a
/// waiting request costs no allocation of its own.
struct Waiter: Sendable {
    /// What the waiter wants once the line reaches it.
    enum Kind: Sendable {
        /// A request to sign.
        case request
        /// ``RefreshingRequestClosure/refreshIfNeeded(completion:)``: answered when the held
        /// authentication is fresh, signing nothing.
        case probe
    }

    /// The request as it was handed in, unsigned.
    let request: URLRequest
    /// Called once, with the answer, by whoever takes the waiter out of the machine.
    let completion: AuthorizationTask.Completion
    /// Its place in arrival order.
    let ticket: UInt64
    let arrivedAt: TimeInterval
    /// For a request the server rejected (HTTP 401): the generation that signed it, when that
    /// was the one held as it arrived.
    let rejectedGeneration: UInt64?
    let kind: Kind
}

/// The waiting requests in arrival order: append at the back, take from the front, and remove a
/// cancelled one from anywhere without moving the others.
///
/// Tickets grow with arrival, so the line is sorted by ticket and a cancelled waiter is found by
/// binary search; it leaves an empty slot that the front skips.
struct WaitLine: Sendable {
    private var slots: [Waiter?] = []
    private var head = 0
    /// Waiters in the line (empty slots not counted).
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The waiter at the front.
    var first: Waiter? {
        mutating get {
            skipEmptySlots()
            return head < slots.count ? slots[head] : nil
        }
    }

    /// The waiter at the front, found without moving past the empty slots.
    var front: Waiter? {
        guard count > 0 else { return nil }
        return slots[head...].first(where: { $0 != nil }) ?? nil
    }

    /// The ticket of the last waiter, if any.
    var lastTicket: UInt64? {
        guard count > 0 else { return nil }
        return slots.last(where: { $0 != nil })??.ticket
    }

    mutating func append(_ waiter: Waiter) {
        slots.append(waiter)
        count += 1
    }

    /// Puts `waiter`, which arrived earlier and waited beside the line, in its place by ticket.
    mutating func insert(_ waiter: Waiter) {
        guard let last = lastTicket, waiter.ticket < last else { return append(waiter) }
        skipEmptySlots()
        let place = slots[head...].firstIndex { $0.map { $0.ticket > waiter.ticket } ?? false } ?? slots.count
        slots.insert(waiter, at: place)
        count += 1
    }

    /// Takes waiters from the front while `include` says so.
    mutating func removeFirst(while include: (Waiter) -> Bool) -> [Waiter] {
        var taken: [Waiter] = []
        while let waiter = first, include(waiter) {
            slots[head] = nil
            head += 1
            count -= 1
            taken.append(waiter)
        }
        compactIfNeeded()
        return taken
    }

    /// Takes the waiter at the front.
    mutating func removeFirst() -> Waiter? {
        var taken = false
        return removeFirst(while: { _ in
            defer { taken = true }
            return !taken
        }).first
    }

    /// Takes every waiter, in order.
    mutating func removeAll() -> [Waiter] {
        removeFirst(while: { _ in true })
    }

    /// Removes the waiter with `ticket`, wherever it is.
    mutating func remove(ticket: UInt64) -> Waiter? {
        guard let index = slot(of: ticket), let found = slots[index] else { return nil }
        slots[index] = nil
        count -= 1
        compactIfNeeded()
        return found
    }

    /// Whether the waiter with `ticket` is in the line.
    func contains(ticket: UInt64) -> Bool {
        slot(of: ticket) != nil
    }

    /// The slot of the waiter with `ticket`, found by binary search.
    private func slot(of ticket: UInt64) -> Int? {
        var low = head
        var high = slots.count
        // Empty slots keep their position; search the nearest filled slot at each step.
        while low < high {
            let middle = (low + high) / 2
            var probe = middle
            while probe < high, slots[probe] == nil { probe += 1 }
            guard probe < high, let found = slots[probe] else {
                high = middle
                continue
            }
            if found.ticket == ticket { return probe }
            if found.ticket < ticket {
                low = probe + 1
            } else {
                high = middle
            }
        }
        return nil
    }

    private mutating func skipEmptySlots() {
        while head < slots.count, slots[head] == nil { head += 1 }
    }

    private mutating func compactIfNeeded() {
        if count == 0 {
            slots.removeAll(keepingCapacity: slots.count <= 1024)
            head = 0
        } else if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
