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
        Waiter(
            request: URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, ticket: ticket, arrivedAt: 0,
            rejectedGeneration: nil, kind: .request)
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
}
