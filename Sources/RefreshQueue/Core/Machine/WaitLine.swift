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
/// binary search. It leaves its ticket behind in its slot, so that every search stays a binary
/// search however many have left; the front and the back never rest on such a slot, and the
/// slots are compacted once more have been left than are waiting. Every operation but
/// ``insert(_:)`` costs O(log n) or O(1) amortized, whatever order requests are cancelled in.
struct WaitLine: Sendable {
    /// A place in the line: a waiter, or the ticket of one that has left. No larger than a
    /// waiter alone.
    private enum Slot: Sendable {
        case waiting(Waiter)
        case left(ticket: UInt64)

        var ticket: UInt64 {
            switch self {
            case .waiting(let waiter): waiter.ticket
            case .left(let ticket): ticket
            }
        }

        var waiter: Waiter? {
            guard case .waiting(let waiter) = self else { return nil }
            return waiter
        }

        /// Whether a waiter is here (without copying it out).
        var isWaiting: Bool {
            guard case .waiting = self else { return false }
            return true
        }
    }

    /// `slots[head]` and the last slot hold waiters whenever the line is not empty.
    private var slots: [Slot] = []
    private var head = 0
    /// Waiters in the line (slots left behind not counted).
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The waiter at the front.
    var first: Waiter? {
        count > 0 ? slots[head].waiter : nil
    }

    /// The ticket of the last waiter, if any.
    var lastTicket: UInt64? {
        count > 0 ? slots.last?.ticket : nil
    }

    mutating func append(_ waiter: Waiter) {
        slots.append(.waiting(waiter))
        count += 1
    }

    /// Puts `waiter`, which arrived earlier and waited beside the line, in its place by ticket.
    mutating func insert(_ waiter: Waiter) {
        guard let last = lastTicket, waiter.ticket < last else { return append(waiter) }
        let place = firstSlot(notBefore: waiter.ticket)
        if place == head, head > 0 {
            // In front of the line: the slot before it is free.
            head -= 1
            slots[head] = .waiting(waiter)
        } else {
            slots.insert(.waiting(waiter), at: place)
        }
        count += 1
    }

    /// Takes waiters from the front while `include` says so.
    ///
    /// The waiters are moved out of their slots, not copied: taking a group of thousands touches
    /// no reference count of theirs.
    mutating func removeFirst(while include: (Waiter) -> Bool) -> [Waiter] {
        var end = head
        var taking = 0
        while end < slots.count {
            if case .waiting(let waiter) = slots[end] {
                guard include(waiter) else { break }
                taking += 1
            }
            end += 1
        }
        var taken: [Waiter] = []
        taken.reserveCapacity(taking)
        for index in head..<end {
            if let waiter = take(at: index) { taken.append(waiter) }
        }
        count -= taken.count
        settleEnds()
        compactIfNeeded()
        return taken
    }

    /// Moves the waiter at `index` out of its slot, leaving its ticket behind; `nil` when the
    /// slot holds none.
    private mutating func take(at index: Int) -> Waiter? {
        var slot = Slot.left(ticket: slots[index].ticket)
        swap(&slot, &slots[index])
        switch consume slot {
        case .waiting(let waiter): return waiter
        case .left: return nil
        }
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
        guard let index = slot(of: ticket), let found = take(at: index) else { return nil }
        count -= 1
        settleEnds()
        compactIfNeeded()
        return found
    }

    /// Whether the waiter with `ticket` is in the line.
    func contains(ticket: UInt64) -> Bool {
        slot(of: ticket).map { slots[$0].isWaiting } ?? false
    }

    /// The slot that holds `ticket` (a waiter or one that has left), found by binary search.
    private func slot(of ticket: UInt64) -> Int? {
        let index = firstSlot(notBefore: ticket)
        return index < slots.count && slots[index].ticket == ticket ? index : nil
    }

    /// The first slot from the front whose ticket is `ticket` or later; the end when none is.
    private func firstSlot(notBefore ticket: UInt64) -> Int {
        var low = head
        var high = slots.count
        while low < high {
            let middle = low + (high - low) / 2
            if slots[middle].ticket < ticket {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    /// Moves the front past slots left behind, and drops those at the back, so that both ends
    /// hold waiters (each such slot is passed once).
    private mutating func settleEnds() {
        guard count > 0 else { return }
        while !slots[head].isWaiting { head += 1 }
        while slots.last?.isWaiting == false { slots.removeLast() }
    }

    /// Frees the slots before the front once they are most of the line, and drops the slots left
    /// behind inside it once they outnumber the waiters: each removal pays for one slot moved.
    private mutating func compactIfNeeded() {
        if count == 0 {
            slots.removeAll(keepingCapacity: slots.count <= 1024)
            head = 0
            return
        }
        let leftInside = slots.count - head - count
        if leftInside > 64, leftInside > count {
            slots = slots[head...].filter(\.isWaiting)
            head = 0
        } else if head > 64, head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
