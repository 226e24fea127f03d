import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A cancellation finds its waiter in a group handed out to be answered: by binary search in a
/// group in arrival order, by a scan in one that is not (probes put together from beside the line
/// and from it), and nowhere in a group that does not hold it.
@Suite("Finding a waiter in a group of answers", .timeLimit(.minutes(1)))
struct AnswersLookupTests {
    private func answers(_ tickets: [UInt64]) -> RefreshStateMachine.Answers {
        let waiters = tickets.map { ticket in
            Waiter(
                request: URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, ticket: ticket,
                arrivedAt: 0, rejectedGeneration: nil, kind: .request)
        }
        return RefreshStateMachine.Answers(waiters: waiters, outcome: .fail(.cancelled))
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
}
