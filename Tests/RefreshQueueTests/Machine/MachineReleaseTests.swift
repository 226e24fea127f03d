import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The machine runs under the closure's lock, so nothing of the app's may be released inside it:
/// an error's or an authentication's `deinit` is user code, and one that calls back into the
/// closure would deadlock on its lock. What the machine lets go of leaves with the actions.
@Suite("The machine releases nothing of the app's itself", .timeLimit(.minutes(1)))
struct MachineReleaseTests {
    typealias Machine = RefreshStateMachine

    /// Whose last release is watched through a weak reference.
    private final class Watched: Sendable {}

    /// An app's error that holds the last reference to something.
    private struct AppError: Error {
        let watched: Watched
    }

    private static func credential() -> HeldCredential {
        MachineStep.credential("token")
    }

    /// A machine whose waiting request's refresh just failed with an error that nothing but the
    /// machine holds now: the line is approved to fail with it.
    private static func failedRefresh(watching watched: inout Watched?) throws -> Machine {
        var machine = Machine(
            configuration: .init(
                refreshTimeout: 30, abandonAfter: 120, window: RefreshWindow(maximumRefreshes: 5, interval: 30)))
        _ = machine.arrive(URLRequest(url: URL(fileURLWithPath: "/")), completion: { _ in }, now: 0)
        guard case .find = machine.pump(now: 0) else {
            Issue.record("the first request does not load the authentication")
            return machine
        }
        _ = machine.found(credential(), now: 0)
        guard case .evaluate(_, let generation, _) = machine.pump(now: 0) else {
            Issue.record("the loaded authentication is not evaluated")
            return machine
        }
        let attempt = try #require(
            machine.evaluated(generation: generation, freshness: .needed, now: 0).refresh?.attempt)
        let object = Watched()
        watched = object
        // The actions (its event, its answers) are let go of here: only the machine keeps the error.
        _ = machine.refreshEnded(attempt: attempt, .failed(.init(error: AppError(watched: object))), now: 1)
        return machine
    }

    @Test(arguments: ["invalidate", "adopt"])
    func anErrorTheLineWasApprovedToFailWithIsReleasedWithTheActions(event: String) throws {
        weak var watched: Watched?
        var strong: Watched?
        var machine = try Self.failedRefresh(watching: &strong)
        watched = strong
        strong = nil
        try #require(watched != nil, "the machine no longer holds the refresh's error")
        var actions: Machine.Actions? =
            event == "invalidate" ? machine.invalidate(now: 2) : machine.adopt(Self.credential(), now: 2)
        #expect(watched != nil, "released inside the machine, under the closure's lock (\(event))")
        actions = nil
        #expect(actions == nil)
        #expect(watched == nil, "still held after \(event) and its actions")
    }

    /// A group answered while another was being delivered waits for the deliverer; once it is
    /// delivered, the machine hands it back with the next one instead of releasing it: its
    /// completions hold the app's objects (a callback's captures), whose `deinit` is user code.
    @Test func aDeliveredGroupLeavesTheMachineWithItsCompletions() {
        weak var watched: Watched?
        var delivery = Machine.Delivery.idle
        do {
            let object = Watched()
            watched = object
            let first = Waiter.request(ticket: 1)
            let second = Waiter(
                request: URLRequest(url: URL(fileURLWithPath: "/")),
                completion: { _ in withExtendedLifetime(object) {} }, ticket: 2, arrivedAt: 0,
                rejectedGeneration: nil, kind: .request)
            _ = delivery.handOut(Machine.Answers(waiters: [first], outcome: .fail(.cancelled)))
            #expect(delivery.handOut(Machine.Answers(waiters: [second], outcome: .fail(.cancelled))) == nil)
        }
        var handed: (next: Machine.Answers?, done: Machine.Answers?)? = delivery.next()
        #expect(handed?.next?.waiters.map(\.ticket) == [2])
        handed = nil
        #expect(watched != nil, "the group being delivered is the machine's to keep")
        handed = delivery.next()
        #expect(handed?.next == nil && !delivery.isBusy)
        #expect(watched != nil, "released inside the machine, under the closure's lock")
        handed = nil
        #expect(watched == nil, "still held once the delivered group was let go of")
    }
}
