import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The line keeps arrival order when a waiter that waited beside it (a `refreshIfNeeded` probe)
/// is put back in its place, and a waiter can still be found by its ticket afterwards.
@Suite("The wait line", .timeLimit(.minutes(1)))
struct WaitLineTests {
    private func waiter(_ ticket: UInt64) -> Waiter {
        .request(ticket: ticket)
    }

    @Test func aWaiterPutBackGoesToItsPlaceByTicketAndCanBeCancelledThere() {
        var line = WaitLine()
        for ticket: UInt64 in [2, 4, 6, 8] { line.append(waiter(ticket)) }
        _ = line.removeFirst()  // 2 leaves: the front is now past an empty slot.
        _ = line.remove(ticket: 6)
        line.insert(waiter(1))
        line.insert(waiter(5))
        line.insert(waiter(9))
        line.insert(waiter(7))
        #expect(line.count == 6)
        #expect(line.remove(ticket: 5)?.ticket == 5)
        #expect(line.remove(ticket: 7)?.ticket == 7)
        #expect(line.remove(ticket: 6) == nil)
        #expect(line.removeAll().map(\.ticket) == [1, 4, 8, 9])
        line.insert(waiter(3))
        #expect(line.removeAll().map(\.ticket) == [3])
    }

    /// Random appends, cancellations (from anywhere, in runs from either end), removals from the
    /// front and waiters put back, checked after every step against a plain sorted array.
    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func randomOperationsKeepTheLineEqualToASortedArray(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var line = WaitLine()
        var model: [UInt64] = []
        var nextTicket: UInt64 = 1_000
        var beside: [UInt64] = (0..<200).map { $0 * 5 }  // earlier tickets, waiting beside the line
        for step in 0..<3_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                for _ in 0..<Int.random(in: 1...40, using: &random) {
                    line.append(waiter(nextTicket))
                    model.append(nextTicket)
                    nextTicket += 1
                }
            case 3..<6:
                // A run of cancellations from the back, the front or the middle.
                guard !model.isEmpty else { continue }
                let run = Int.random(in: 1...min(model.count, 60), using: &random)
                let anywhere = Int.random(in: 0...(model.count - run), using: &random)
                let start = [0, model.count - run, anywhere].randomElement(using: &random) ?? 0
                let tickets = Array(model[start..<start + run])
                for ticket in Bool.random(using: &random) ? tickets : tickets.reversed() {
                    #expect(line.remove(ticket: ticket)?.ticket == ticket, "step \(step)")
                    #expect(line.remove(ticket: ticket) == nil, "removed twice at step \(step)")
                }
                model.removeSubrange(start..<start + run)
            case 6:
                let taken = Int.random(in: 0...min(model.count, 30), using: &random)
                var left = taken
                let removed = line.removeFirst(while: { _ in
                    defer { left -= 1 }
                    return left > 0
                })
                #expect(removed.map(\.ticket) == Array(model.prefix(taken)), "step \(step)")
                model.removeFirst(taken)
            case 7:
                guard let ticket = beside.popLast() else { continue }
                line.insert(waiter(ticket))
                model.insert(ticket, at: model.firstIndex { $0 > ticket } ?? model.count)
            default:
                let ticket = UInt64.random(in: 0..<nextTicket + 5, using: &random)
                #expect(line.contains(ticket: ticket) == model.contains(ticket), "step \(step)")
            }
            #expect(line.count == model.count, "step \(step)")
            #expect(line.first?.ticket == model.first, "step \(step)")
            #expect(line.lastTicket == model.last, "step \(step)")
        }
        #expect(line.removeAll().map(\.ticket) == model)
        #expect(line.isEmpty)
    }
}
