import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each event of a held line and of the refresh that holds it, one step per line: requests
/// joining, the refresh ending each way, wait timers, the abandon limit.
@Suite("Machine steps: a refresh holding the line", .timeLimit(.minutes(1)))
struct RefreshTransitionTests {
    typealias Step = MachineStep

    @Test func aRequestArrivingAtAHeldLineJoinsTheRunningRefresh() {
        var (machine, attempt, _) = Step.heldByRefresh()
        let actions = Step.arrive(&machine, at: 1).actions
        #expect(actions.eventTexts == ["request waiting (2 queued)"])
        #expect(actions.refresh == nil && !actions.schedulePump && actions.queue == .none)
        #expect(machine.snapshot.refreshAttempt == attempt)
    }

    @Test func aSuccessfulRefreshResumesTheQueueAndTheNextPumpSignsEveryWaiterWithIt() {
        var (machine, attempt, tickets) = Step.heldByRefresh(waiting: 2)
        let actions = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 3)
        #expect(actions.queue == .resume)
        #expect(actions.schedulePump)
        #expect(
            actions.eventTexts == [
                "refresh succeeded in 3000 ms", "queue resumed (2 queued)", "refresh held 2 requests for 3000 ms",
            ])
        let step = machine.pump(now: 3)
        #expect(step.actions.answeredTickets == tickets)
        #expect(step.actions.outcome == "sign Bearer new")
        #expect(machine.snapshot.generation == 2)
    }

    /// A refusal by the server counts against the window; the network failing does not.
    @Test(arguments: [false, true])
    func aFailedRefreshFailsItsWaitersAndOnlyARefusalCountsAgainstTheWindow(isTransport: Bool) {
        let window = RefreshWindow(maximumRefreshes: 1, interval: 60)
        var (machine, attempt, tickets) = Step.heldByRefresh(window: window)
        let ended = machine.refreshEnded(attempt: attempt, Step.failure(isTransport: isTransport), now: 1)
        #expect(ended.eventTexts.first?.hasPrefix("refresh failed in 1000 ms") == true)
        let step = machine.pump(now: 1)
        #expect(step.actions.answeredTickets == tickets)
        #expect(step.actions.outcome == "fail refreshFailed")
        #expect(Step.deliver(step.actions, in: &machine, byPump: true))
        let next = Step.arrive(&machine, at: 2).actions
        #expect((next.refresh != nil) == isTransport)
        #expect((next.outcome == "fail excessiveRefresh") == !isTransport)
    }

    @Test func aRefusalOnlyANewLoginCuresForgetsTheCredential() {
        var (machine, attempt, _) = Step.heldByRefresh()
        _ = machine.refreshEnded(attempt: attempt, Step.failure(requiresReauthentication: true), now: 1)
        #expect(machine.snapshot.credential == nil)
        #expect(Step.pumpAndDeliver(&machine, now: 1).actions.outcome == "fail refreshFailed")
        _ = Step.arrive(&machine, at: 2)
        #expect(machine.pump(now: 2).text == "find")
    }

    @Test func aRetryAfterFailsTheNextRefreshesAtOnceUntilThePauseEnds() {
        var (machine, attempt, _) = Step.heldByRefresh()
        _ = machine.refreshEnded(attempt: attempt, Step.failure(retryAfter: 30), now: 1)
        _ = Step.pumpAndDeliver(&machine, now: 1)
        let during = Step.arrive(&machine, at: 30.9).actions
        #expect(during.refresh == nil)
        #expect(during.outcome == "fail refreshFailed")
        Step.deliver(during, in: &machine)
        let after = Step.arrive(&machine, at: 31).actions
        #expect(after.refresh != nil)
    }

    @Test func aRefreshedTokenStaleOnArrivalFailsTheWaitersAsExcessive() {
        var (machine, attempt, _) = Step.heldByRefresh()
        let actions = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("stale"), .needed), now: 1)
        #expect(actions.eventTexts.first?.hasPrefix("refresh failed in 1000 ms: ") == true)
        #expect(actions.queue == .resume)
        #expect(machine.pump(now: 1).actions.outcome == "fail excessiveRefresh")
    }

    @Test func aSupersededRefreshForgetsWhatItRefreshedAndTheLineAsksFindAgain() {
        var (machine, attempt, _) = Step.heldByRefresh()
        let actions = machine.refreshEnded(attempt: attempt, .superseded, now: 1)
        #expect(actions.queue == .resume)
        #expect(machine.snapshot.credential == nil)
        #expect(machine.pump(now: 1).text == "find")
    }

    @Test func theEndOfAnAttemptTheMachineDoesNotKnowOnlyReleasesItsResult() {
        var machine = Step.machine()
        let actions = machine.refreshEnded(attempt: 99, .refreshed(Step.credential("unknown"), .fresh), now: 0)
        #expect(actions.displaced.count == 1)
        #expect(actions.events.isEmpty && actions.answers == nil && actions.queue == .none)
    }

    // MARK: - Wait timers

    @Test func theWaitTimerFailsOnlyTheWaitersWhoseTimeoutPassedAndTheRefreshRunsOn() {
        var (machine, attempt, tickets) = Step.heldByRefresh(refreshTimeout: 10)
        _ = Step.arrive(&machine, at: 5)
        let actions = machine.timerFired(deadline: 10, now: 10)
        #expect(actions.eventTexts == ["refresh timed out after 10000 ms"])
        #expect(actions.answeredTickets == tickets)
        #expect(actions.outcome == "fail refreshTimedOut")
        #expect(actions.waitTimer == 15)
        #expect(actions.queue == .none)
        #expect(machine.snapshot.refreshAttempt == attempt)
    }

    @Test func whenTheLastWaiterTimesOutTheQueueResumesAndANewRequestJoinsTheSameRefresh() {
        var (machine, attempt, _) = Step.heldByRefresh(refreshTimeout: 10)
        let actions = machine.timerFired(deadline: 10, now: 10)
        #expect(actions.queue == .resume)
        #expect(actions.eventTexts.last == "refresh held 1 request for 10000 ms")
        Step.deliver(actions, in: &machine)
        let joined = Step.arrive(&machine, at: 11).actions
        #expect(joined.refresh == nil)
        #expect(joined.queue == .suspend)
        #expect(machine.snapshot.refreshAttempt == attempt)
    }

    @Test func aTimerFiringBeforeItsDeadlineAnswersNobodyAndIsArmedAgain() {
        var (machine, _, _) = Step.heldByRefresh(refreshTimeout: 10)
        let actions = machine.timerFired(deadline: 10, now: 9.5)
        #expect(actions.answers == nil && actions.events.isEmpty)
        #expect(actions.waitTimer == 10)
    }

    @Test func aWaitForFindEndsAfterRefreshTimeoutToo() {
        var machine = Step.machine(refreshTimeout: 10)
        let ticket = Step.arrive(&machine).ticket
        _ = machine.pump(now: 0)
        let actions = machine.timerFired(deadline: 10, now: 10)
        #expect(actions.eventTexts == ["refresh timed out after 10000 ms"])
        #expect(actions.answeredTickets == [ticket])
        #expect(actions.outcome == "fail refreshTimedOut")
    }

    // MARK: - The abandon limit

    @Test func theAbandonLimitGivesTheRefreshUpAndTheLineDecidesAgain() {
        var (machine, attempt, _) = Step.heldByRefresh(abandonAfter: 40)
        let actions = machine.abandonLimitReached(attempt: attempt, now: 40)
        #expect(actions.eventTexts == ["refresh abandoned after 40000 ms", "refresh held 1 request for 40000 ms"])
        #expect(actions.queue == .resume && actions.schedulePump)
        #expect(machine.snapshot.refreshAttempt == nil)
        let step = machine.pump(now: 40)
        #expect(step.actions.refresh.map { $0.attempt > attempt } == true)
    }

    @Test func anAbandonLimitOfARefreshThatEndedChangesNothing() {
        var (machine, attempt, _) = Step.heldByRefresh()
        _ = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 1)
        let actions = machine.abandonLimitReached(attempt: attempt, now: 40)
        #expect(actions.events.isEmpty && actions.queue == .none && !actions.schedulePump)
    }

    @Test func aLateSuccessOfAnAbandonedRefreshIsAdoptedWhenNothingNewerWas() {
        var (machine, attempt, _) = Step.heldByRefresh()
        _ = machine.abandonLimitReached(attempt: attempt, now: 40)
        _ = machine.pump(now: 40)
        let newer = machine.snapshot.refreshAttempt
        let actions = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("late"), .fresh), now: 41)
        #expect(actions.eventTexts.first == "late refresh adopted after 41000 ms")
        #expect(machine.snapshot.credential?.signingHeader == "Bearer late")
        // The refresh started after the abandonment runs on: it is the one running.
        #expect(machine.snapshot.refreshAttempt == newer)
    }

    @Test func aLateSuccessIsNotAdoptedOnceANewerRefreshsResultWas() throws {
        var (machine, attempt, _) = Step.heldByRefresh()
        _ = machine.abandonLimitReached(attempt: attempt, now: 40)
        let newer = try #require(machine.pump(now: 40).actions.refresh?.attempt)
        _ = machine.refreshEnded(attempt: newer, .refreshed(Step.credential("newer"), .fresh), now: 41)
        let actions = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("older"), .fresh), now: 42)
        #expect(actions.displaced.count == 1)
        #expect(actions.events.isEmpty)
        #expect(machine.snapshot.credential?.signingHeader == "Bearer newer")
    }

    // MARK: - The window

    @Test func aWindowRefusalIsReportedOncePerEpisode() {
        let window = RefreshWindow(maximumRefreshes: 1, interval: 60)
        var (machine, attempt, _) = Step.heldByRefresh(window: window)
        _ = machine.refreshEnded(attempt: attempt, Step.failure(), now: 1)
        _ = Step.pumpAndDeliver(&machine, now: 1)
        let first = Step.arrive(&machine, at: 2).actions
        #expect(first.eventTexts.contains { $0.hasPrefix("refresh refused") })
        Step.deliver(first, in: &machine)
        let second = Step.arrive(&machine, at: 3).actions
        #expect(second.outcome == "fail excessiveRefresh")
        #expect(!second.eventTexts.contains { $0.hasPrefix("refresh refused") })
        Step.deliver(second, in: &machine)
        // The counted failure leaves the window at 61: a refresh may start again.
        #expect(Step.arrive(&machine, at: 61).actions.refresh != nil)
    }
}
