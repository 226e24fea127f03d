import Foundation

extension RefreshStateMachine {
    /// Who answers the waiters: the pump, which moves the line on the serial queue, and the
    /// groups of answers handed out to be delivered, one group at a time.
    struct HandOut: Sendable {
        /// A pump is enqueued or running; it asks for the next step until told `idle`.
        var pumpPending = false
        /// Waiters handed out for answering and not yet reported answered.
        var unanswered = 0
        /// Whether a group of answers is being delivered, and the groups handed out meanwhile.
        var delivery = Delivery.idle

        /// Nobody is being answered and no pump is due: a request may be signed past the line.
        var isIdle: Bool { !pumpPending && unanswered == 0 }
    }
}

extension RefreshStateMachine {
    /// Who delivers answers: nobody, or one deliverer, who also delivers the groups handed out
    /// while it delivers, in the order they were handed out.
    enum Delivery: Sendable {
        case idle
        /// `current`: the group being delivered, kept here so that a cancellation can still take
        /// one of its waiters before its completion is called. `inOrder`: each deferred group's
        /// tickets all come after those of the group before it (as groups handed out one after
        /// another nearly always do), so that a ticket's group is found by binary search.
        case busy(current: Answers, deferred: [Answers], inOrder: Bool)

        /// The groups waiting for the deliverer.
        var deferred: [Answers] {
            guard case .busy(_, let deferred, _) = self else { return [] }
            return deferred
        }

        var isBusy: Bool {
            guard case .busy = self else { return false }
            return true
        }

        /// The group handed out and not yet delivered that holds the waiter with `ticket`, and
        /// its place there; `nil` when no such group holds it. A cancellation asks, under the
        /// closure's lock: however many groups wait for a slow deliverer, it costs O(log n).
        func place(of ticket: UInt64) -> (group: Answers, index: Int)? {
            guard case .busy(let current, let deferred, let inOrder) = self else { return nil }
            if let index = current.index(of: ticket) { return (current, index) }
            guard inOrder else {
                for group in deferred {
                    if let index = group.index(of: ticket) { return (group, index) }
                }
                return nil
            }
            // The first group whose tickets do not all come before `ticket`.
            var low = 0
            var high = deferred.count
            while low < high {
                let middle = low + (high - low) / 2
                if let tickets = deferred[middle].tickets, tickets.upperBound < ticket {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            guard low < deferred.count, let index = deferred[low].index(of: ticket) else { return nil }
            return (deferred[low], index)
        }

        /// Hands `group` out: to the caller (returned) when nobody delivers, else to the
        /// deliverer, after the groups already waiting for it.
        mutating func handOut(_ group: Answers) -> Answers? {
            guard case .busy(let current, var deferred, var inOrder) = self else {
                self = .busy(current: group, deferred: [], inOrder: true)
                return group
            }
            self = .idle  // so that the list is not shared, and the append does not copy it
            // An empty group has no place in that order.
            if inOrder, let tickets = group.tickets {
                inOrder = deferred.last?.tickets.map { $0.upperBound < tickets.lowerBound } ?? true
            } else {
                inOrder = false
            }
            deferred.append(group)
            self = .busy(current: current, deferred: deferred, inOrder: inOrder)
            return nil
        }

        /// The deliverer is done with its group: the next one waiting for it, or `nil` (and idle)
        /// when none is left; and the group just delivered, handed back rather than released
        /// here, under the closure's lock: its completions may hold the last references to the
        /// app's objects, whose `deinit` is user code.
        mutating func next() -> (next: Answers?, done: Answers?) {
            guard case .busy(let current, var deferred, let inOrder) = self else { return (nil, nil) }
            self = .idle  // as in `handOut(_:)`
            guard !deferred.isEmpty else { return (nil, current) }
            let next = deferred.removeFirst()
            self = .busy(current: next, deferred: deferred, inOrder: inOrder || deferred.isEmpty)
            return (next, current)
        }
    }
}
