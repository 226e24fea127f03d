import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cancellation finds its waiter in a group handed out to be answered: by binary search in a
/// group in arrival order, by a scan in one that is not (probes put together from beside the line
/// and from it), and nowhere in a group that does not hold it; and among the groups waiting for
/// the deliverer, by binary search while their tickets follow one another, by a scan otherwise.
@Suite("Finding a waiter in groups of answers", .timeLimit(.minutes(1)))
struct AnswersLookupTests {
    private func answers(_ tickets: [UInt64]) -> RefreshStateMachine.Answers {
        RefreshStateMachine.Answers(waiters: tickets.map(Waiter.request(ticket:)), outcome: .fail(.cancelled))
    }

    @Test(arguments: [0, 1, 2, 3, 64, 65, 1_000])
    func everyWaiterOfAGroupInArrivalOrderIsFoundAndNoOther(count: Int) {
        // Tickets with gaps, as a group has when waiters left the line before it was answered.
        let tickets = (0..<UInt64(count)).map { $0 * 3 + 7 }
        let group = answers(tickets)
        let misplaced = tickets.indices.filter { group.index(of: tickets[$0]) != $0 }
        #expect(misplaced.count == 0, "found at the wrong place: \(misplaced.prefix(10))")
        let strays = [0, 6, 8, 9, UInt64(count) * 3 + 7, .max].filter { group.index(of: $0) != nil }
        #expect(strays.count == 0, "found tickets the group does not hold: \(strays)")
    }

    @Test func aGroupOutOfArrivalOrderIsSearchedWholly() {
        let tickets: [UInt64] = [40, 41, 12, 13, 90, 5]
        let group = answers(tickets)
        #expect(tickets.indices.allSatisfy { group.index(of: tickets[$0]) == $0 })
        #expect(group.index(of: 14) == nil)
    }

    /// Groups handed out while one is delivered, then delivered one by one: after every step,
    /// each ticket handed out and not yet delivered is found in its own group at its own place,
    /// and no other ticket is found.
    @Test(arguments: [false, true])
    func everyWaiterOfTheGroupsWaitingForTheDelivererIsFound(outOfOrder: Bool) {
        var random = SeededRandom(seed: outOfOrder ? 2 : 1)
        var next: UInt64 = 10
        var groups: [[UInt64]] = []
        for _ in 0..<300 {
            let size = Int.random(in: 1...4, using: &random)
            groups.append((0..<UInt64(size)).map { next + $0 * 2 })
            next += UInt64(size) * 2 + UInt64.random(in: 0...3, using: &random)
        }
        if outOfOrder {
            // Probes answered after the line: a group whose tickets come before the last one's.
            groups.insert([1, 3], at: 150)
            groups[200].reverse()
        }
        var delivery = RefreshStateMachine.Delivery.idle
        for group in groups {
            _ = delivery.handOut(answers(group))
        }
        var delivered = 0
        while delivered < groups.count {
            let pending = groups[delivered...]
            let misplaced = pending.flatMap { tickets in
                tickets.enumerated().compactMap { index, ticket -> UInt64? in
                    guard let place = delivery.place(of: ticket) else { return ticket }
                    return place.index == index && place.group.waiters.map(\.ticket) == tickets ? nil : ticket
                }
            }
            #expect(misplaced.count == 0, "not found in their place: \(misplaced.prefix(10))")
            let handedOut = Set(pending.joined())
            let strays = (0..<next + 2).filter { !handedOut.contains($0) && delivery.place(of: $0) != nil }
            #expect(strays.count == 0, "found tickets no group holds: \(strays.prefix(10))")
            let step = min(groups.count - delivered, Int.random(in: 1...40, using: &random))
            for _ in 0..<step { _ = delivery.next().next }
            delivered += step
        }
        #expect(!delivery.isBusy)
    }
}
