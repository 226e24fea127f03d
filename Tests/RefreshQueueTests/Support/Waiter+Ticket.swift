import Foundation

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Waiter {
    /// A request waiting with `ticket`, whose completion does nothing: what tests of the line and
    /// of groups of answers need, where only the ticket matters.
    static func request(ticket: UInt64) -> Waiter {
        Waiter(
            request: URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, ticket: ticket, arrivedAt: 0,
            rejectedGeneration: nil, kind: .request)
    }
}
