import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each event the app sends (cancel, log out, log in, ask for a refresh ahead) and each step of
/// handing answers out, one step per line.
@Suite("Machine steps: the app, refreshes ahead and answers handed out", .timeLimit(.minutes(1)))
struct AppAndProbeTransitionTests {
    typealias Step = MachineStep

    // MARK: - Cancellation

    @Test func cancellingTheOnlyWaiterOfAHeldLineTakesItOutAndResumesTheQueue() {
        var (machine, attempt, tickets) = Step.heldByRefresh()
        let actions = machine.cancel(ticket: tickets[0], now: 1)
        #expect(actions.cancelled?.ticket == tickets[0])
        #expect(actions.queue == .resume)
        #expect(actions.eventTexts == ["refresh held 1 request for 1000 ms"])
        #expect(machine.snapshot.refreshAttempt == attempt)
    }

    @Test func cancellingATicketNobodyWaitsWithChangesNothing() {
        var machine = Step.machine()
        let actions = machine.cancel(ticket: 42, now: 0)
        #expect(actions.cancelled == nil && actions.events.isEmpty && actions.queue == .none)
    }

    @Test func cancelAllFailsEveryWaiterAsCancelledInArrivalOrderAndTheRefreshRunsOn() {
        var (machine, attempt, tickets) = Step.heldByRefresh(waiting: 3)
        let actions = machine.cancelAll(now: 1)
        #expect(actions.answeredTickets == tickets)
        #expect(actions.outcome == "fail cancelled")
        #expect(actions.queue == .resume)
        #expect(machine.snapshot.refreshAttempt == attempt)
    }

    // MARK: - Logging out and in

    @Test func anInvalidateWhileHeldSendsTheLineToFindAndAFoundCopyOfWhatTheRefreshRefreshedIsSpent() {
        var (machine, attempt, _) = Step.heldByRefresh(of: "old")
        let invalidated = machine.invalidate(now: 1)
        #expect(invalidated.queue == .resume && invalidated.schedulePump)
        #expect(machine.snapshot.credential == nil)
        #expect(machine.pump(now: 1).text == "find")
        // The refresh of the forgotten login ends while `find()` runs: its result is not adopted.
        let ended = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 2)
        #expect(ended.displaced.count == 1)
        // `find()` read the very token that refresh spent: it is not held, and `find()` is asked again.
        let found = machine.found(Step.credential("old"), now: 2)
        #expect(found.displaced.count == 1)
        #expect(machine.snapshot.credential == nil)
        #expect(machine.pump(now: 2).text == "find")
    }

    @Test func anAdoptWhileHeldLetsTheLineUseTheAdoptedCredentialAndNotTheRefreshsResult() {
        var (machine, attempt, _) = Step.heldByRefresh()
        let adopted = machine.adopt(Step.credential("adopted"), now: 1)
        #expect(adopted.queue == .resume && adopted.schedulePump)
        #expect(machine.pump(now: 1).text == "evaluate 2")
        let ended = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 2)
        #expect(ended.displaced.count == 1)
        #expect(machine.snapshot.credential?.signingHeader == "Bearer adopted")
    }

    // MARK: - Refreshes ahead

    @Test func aRecommendationStartsARefreshAheadOnlyForTheHeldGenerationAndOnlyOnce() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("one"), now: 0)
        _ = machine.adopt(Step.credential("two"), now: 0)
        #expect(machine.refreshRecommended(generation: 1, now: 0).refresh == nil)
        let started = machine.refreshRecommended(generation: 2, now: 0)
        #expect(started.refresh?.credential.signingHeader == "Bearer two")
        #expect(started.eventTexts == ["refresh ahead started (generation 2)"])
        #expect(started.queue == .none)
        #expect(machine.refreshRecommended(generation: 2, now: 0).refresh == nil)
    }

    @Test func aFailedRefreshAheadKeepsTheTokenAndTheNextWaitsOneSecondThenTwo() throws {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let first = try #require(machine.refreshRecommended(generation: 1, now: 0).refresh)
        let failed = machine.refreshEnded(attempt: first.attempt, Step.failure(), now: 0)
        #expect(failed.eventTexts.first?.hasPrefix("refresh ahead failed in 0 ms, current token kept") == true)
        #expect(machine.snapshot.credential?.signingHeader == "Bearer ageing")
        #expect(machine.fastPath()?.recommendationAfter == 1)
        #expect(machine.refreshRecommended(generation: 1, now: 0.9).refresh == nil)
        let second = try #require(machine.refreshRecommended(generation: 1, now: 1).refresh)
        _ = machine.refreshEnded(attempt: second.attempt, Step.failure(), now: 1)
        #expect(machine.fastPath()?.recommendationAfter == 3)
    }

    @Test func aRefreshAheadRefusedForGoodIsNotTriedAgainForThatGeneration() throws {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let start = try #require(machine.refreshRecommended(generation: 1, now: 0).refresh)
        _ = machine.refreshEnded(attempt: start.attempt, Step.failure(requiresReauthentication: true), now: 0)
        #expect(machine.fastPath()?.recommendationAfter == nil)
        #expect(machine.refreshRecommended(generation: 1, now: 3_600).refresh == nil)
    }

    @Test func aProbeWaitsBesideTheLineForTheRefreshAheadAndGetsItsResult() throws {
        var machine = Step.machine(refreshTimeout: 10)
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let (ticket, started) = machine.probeAhead(Step.request, completion: { _ in }, generation: 1, now: 0)
        let attempt = try #require(started.refresh?.attempt)
        #expect(started.answers == nil)
        #expect(started.waitTimer == 10)
        #expect(machine.snapshot.probes == 1)
        // Requests are still signed past it.
        #expect(machine.fastPath() != nil)
        let ended = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 1)
        #expect(ended.eventTexts == ["refresh succeeded in 1000 ms"])
        #expect(ended.answeredTickets == [ticket])
        #expect(ended.outcome == "sign Bearer new")
    }

    @Test func aProbeIsAnsweredAtOnceWhenNoRefreshAheadMayStart() throws {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let start = try #require(machine.refreshRecommended(generation: 1, now: 0).refresh)
        _ = machine.refreshEnded(attempt: start.attempt, Step.failure(), now: 0)
        let (ticket, actions) = machine.probeAhead(Step.request, completion: { _ in }, generation: 1, now: 0.5)
        #expect(actions.refresh == nil)
        #expect(actions.answeredTickets == [ticket])
        #expect(actions.outcome == "sign Bearer ageing")
    }

    @Test func aProbeThatTimedOutMakesTheRefreshsSuccessLate() throws {
        var machine = Step.machine(refreshTimeout: 10)
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let (ticket, started) = machine.probeAhead(Step.request, completion: { _ in }, generation: 1, now: 0)
        let attempt = try #require(started.refresh?.attempt)
        let timedOut = machine.timerFired(deadline: 10, now: 10)
        #expect(timedOut.eventTexts == ["refresh timed out after 10000 ms"])
        #expect(timedOut.answeredTickets == [ticket])
        #expect(timedOut.outcome == "fail refreshTimedOut")
        Step.deliver(timedOut, in: &machine)
        let ended = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 11)
        #expect(ended.eventTexts == ["late refresh adopted after 11000 ms"])
    }

    // MARK: - Handing answers out

    @Test func aGroupAnsweredWhileAnotherIsDeliveredWaitsForThatDeliverer() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("fresh"), now: 0)
        let first = Step.arrive(&machine).ticket
        _ = machine.pump(now: 0)
        let signed = machine.evaluated(generation: 1, freshness: .fresh, now: 0)
        #expect(signed.answeredTickets == [first])
        let second = Step.arrive(&machine).ticket
        let cancelled = machine.cancelAll(now: 0)
        #expect(cancelled.answers == nil)
        #expect(machine.snapshot.deferred == 1 && machine.snapshot.delivering)
        machine.answered(1)
        let handedOn = machine.delivered()
        #expect(handedOn.next?.waiters.map(\.ticket) == [second])
        #expect(handedOn.done?.waiters.map(\.ticket) == [first])
        machine.answered(1)
        #expect(machine.delivered().next == nil)
        #expect(!machine.snapshot.delivering)
    }

    @Test func thePumpStopsWithItsLastAnswerSoThatTheNextRequestTakesTheFastPath() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("fresh"), now: 0)
        _ = Step.arrive(&machine)
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        let signed = machine.evaluated(generation: 1, freshness: .fresh, now: 0)
        // Answered by another than the pump: the pump goes on.
        let stoppedByOther = machine.answered(1, byPump: false)
        #expect(!stoppedByOther)
        #expect(machine.snapshot.pumpPending)
        #expect(machine.fastPath() == nil)
        let stoppedByPump = machine.answered(1, byPump: true)
        #expect(stoppedByPump)
        #expect(!machine.snapshot.pumpPending)
        _ = machine.delivered()
        #expect(signed.answeredTickets.count == 2)
        #expect(machine.fastPath()?.credential.signingHeader == "Bearer fresh")
    }
}
