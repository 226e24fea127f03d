import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each event of the line in each phase that can receive it, one step per line: what the machine
/// decides, as the actions it returns.
@Suite("Machine steps: the line moving, loading and evaluating", .timeLimit(.minutes(1)))
struct LineTransitionTests {
    typealias Step = MachineStep

    // MARK: - Moving

    @Test func aRequestArrivingAtAnEmptyLineSchedulesOnePump() {
        var machine = Step.machine()
        let first = Step.arrive(&machine)
        #expect(first.actions.schedulePump)
        #expect(first.actions.eventTexts == ["request waiting (1 queued)"])
        let second = Step.arrive(&machine)
        #expect(!second.actions.schedulePump)
        #expect(second.ticket == first.ticket + 1)
        #expect(machine.snapshot.waiting == 2 && machine.snapshot.pumpPending)
    }

    @Test func aPumpWithNothingHeldAsksFindAndArmsTheWaitTimer() {
        var machine = Step.machine(refreshTimeout: 10)
        _ = Step.arrive(&machine, at: 3)
        let step = machine.pump(now: 3)
        #expect(step.text == "find")
        #expect(step.actions.waitTimer == 13)
        #expect(machine.snapshot.armedWaitTimer == 13)
    }

    @Test func aPumpWithAnEmptyLineEndsThePump() {
        var machine = Step.machine()
        let ticket = Step.arrive(&machine).ticket
        #expect(machine.cancel(ticket: ticket, now: 0).cancelled?.ticket == ticket)
        #expect(machine.pump(now: 0).text == "idle")
        #expect(!machine.snapshot.pumpPending)
    }

    @Test func aPumpWithAHeldCredentialReadsItsFreshness() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("held"), now: 0)
        _ = Step.arrive(&machine)
        #expect(machine.pump(now: 0).text == "evaluate 1")
    }

    @Test func aFastPathOpensOnlyWhileNobodyWaitsAndNothingIsHandedOut() {
        var machine = Step.machine()
        #expect(machine.fastPath() == nil)
        _ = machine.adopt(Step.credential("held"), now: 0)
        #expect(machine.fastPath()?.credential.signingHeader == "Bearer held")
        _ = Step.arrive(&machine)
        #expect(machine.fastPath() == nil)
    }

    // MARK: - Loading

    /// Only the front is answered, as the missing-authentication policy says; the next asks
    /// `find()` again, so that a login saved meanwhile is seen.
    @Test(arguments: [(MissingAuthenticationPolicy.fail, "fail notAuthenticated"), (.sendUnsigned, "send unsigned")])
    func findingNothingAnswersTheFrontAsThePolicySaysAndAsksAgainForTheNext(
        policy: MissingAuthenticationPolicy, outcome: String
    ) {
        var machine = Step.machine(missingAuthentication: policy)
        let first = Step.arrive(&machine).ticket
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        let actions = machine.found(nil, now: 0)
        #expect(actions.eventTexts == ["no authentication found"])
        #expect(actions.answeredTickets == [first])
        #expect(actions.outcome == outcome)
        #expect(machine.pump(now: 0).text == "find")
    }

    /// `refreshIfNeeded` never goes out: with nothing found it fails, whatever the policy.
    @Test func aProbeFindingNothingFailsWhateverThePolicy() {
        var machine = Step.machine(missingAuthentication: .sendUnsigned)
        _ = Step.arrive(&machine, kind: .probe)
        _ = machine.pump(now: 0)
        #expect(machine.found(nil, now: 0).outcome == "fail notAuthenticated")
    }

    @Test func findingACredentialHoldsItAsANewGenerationAndAnswersNobodyYet() {
        var machine = Step.machine()
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        let actions = machine.found(Step.credential("found"), now: 0)
        #expect(actions.eventTexts == ["authentication loaded"])
        #expect(actions.answers == nil)
        #expect(machine.snapshot.credential?.signingHeader == "Bearer found")
        #expect(machine.snapshot.generation == 1)
        #expect(machine.pump(now: 0).text == "evaluate 1")
    }

    @Test func whatFindReadBeforeAnInvalidateIsNotHeld() {
        var machine = Step.machine()
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        _ = machine.invalidate(now: 0)
        let actions = machine.found(Step.credential("stale"), now: 0)
        #expect(actions.displaced.count == 1)
        #expect(machine.snapshot.credential == nil)
        #expect(machine.pump(now: 0).text == "find")
    }

    @Test func aFindThatFailedFailsTheFrontWithItsErrorAndTheLineMovesOn() {
        var machine = Step.machine()
        let first = Step.arrive(&machine).ticket
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        let actions = machine.findFailed(.notAuthenticated, now: 0)
        #expect(actions.answeredTickets == [first])
        #expect(actions.outcome == "fail notAuthenticated")
        #expect(machine.snapshot.isMoving)
    }

    @Test func aCopyOfATokenRejectedWhileNothingWasHeldIsRefreshedNotSentAgain() {
        var machine = Step.machine()
        _ = Step.arrive(&machine, rejectedHeader: "Bearer rejected")
        _ = machine.pump(now: 0)
        _ = machine.found(Step.credential("rejected"), now: 0)
        let step = machine.pump(now: 0)
        #expect(step.text == "perform")
        #expect(step.actions.refresh != nil)
        #expect(step.actions.eventTexts == ["refresh started (generation 1)"])
    }

    /// Only the pump's steps report what `find()` found and what a freshness read said: either
    /// report in another phase is a bug, and stops the program naming the phase.
    @Test func aReportOfFindOrOfAFreshnessReadInAnotherPhaseStopsTheProgram() async {
        let found = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var machine = MachineStep.machine()
            _ = machine.found(nil, now: 0)
        }
        #expect(found.map { String(decoding: $0.standardErrorContent, as: UTF8.self) }?.contains("moving") == true)
        await #expect(processExitsWith: .failure) {
            var machine = MachineStep.machine()
            _ = machine.adopt(MachineStep.credential("held"), now: 0)
            _ = MachineStep.arrive(&machine)
            _ = machine.pump(now: 0)
            _ = machine.evaluated(generation: 2, freshness: .fresh, now: 0)
        }
    }

    // MARK: - Evaluating

    @Test func aFreshCredentialSignsEveryWaiterInOneGroupInArrivalOrder() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("fresh"), now: 0)
        let tickets = (0..<3).map { _ in Step.arrive(&machine).ticket }
        _ = machine.pump(now: 0)
        let actions = machine.evaluated(generation: 1, freshness: .fresh, now: 0)
        #expect(actions.answeredTickets == tickets)
        #expect(actions.outcome == "sign Bearer fresh")
        #expect(actions.refresh == nil)
        #expect(machine.snapshot.isMoving)
    }

    @Test func aNeededRefreshStartsOneSuspendsTheQueueAndIsGivenUpAtTheAbandonLimit() {
        var machine = Step.machine(abandonAfter: 40)
        _ = machine.adopt(Step.credential("old"), now: 0)
        _ = Step.arrive(&machine, at: 2)
        _ = machine.pump(now: 2)
        let actions = machine.evaluated(generation: 1, freshness: .needed, now: 2)
        #expect(actions.refresh?.credential.signingHeader == "Bearer old")
        #expect(actions.refresh?.abandonAt == 42)
        #expect(actions.queue == .suspend)
        #expect(actions.eventTexts == ["refresh started (generation 1)"])
        // The timer the freshness read armed already answers this request in time.
        #expect(actions.waitTimer == nil)
        #expect(machine.snapshot.armedWaitTimer == 12)
        #expect(machine.snapshot.isHeld)
    }

    @Test func aRecommendedRefreshSignsTheWaitersAndStartsOneAheadWithoutHoldingTheLine() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("ageing"), now: 0)
        let ticket = Step.arrive(&machine).ticket
        _ = machine.pump(now: 0)
        let actions = machine.evaluated(generation: 1, freshness: .recommended, now: 0)
        #expect(actions.answeredTickets == [ticket])
        #expect(actions.outcome == "sign Bearer ageing")
        #expect(actions.refresh != nil)
        #expect(actions.queue == .none)
        #expect(actions.eventTexts == ["refresh ahead started (generation 1)"])
    }

    @Test func aFreshnessReadOfAGenerationNoLongerEvaluatedChangesNothing() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("one"), now: 0)
        _ = Step.arrive(&machine)
        _ = machine.pump(now: 0)
        _ = machine.adopt(Step.credential("two"), now: 0)
        let actions = machine.evaluated(generation: 1, freshness: .needed, now: 0)
        #expect(actions.refresh == nil && actions.answers == nil && actions.events.isEmpty)
    }

    @Test func aRequestCarryingAStaleGenerationStartsTheRefreshWithoutAPump() {
        var machine = Step.machine()
        _ = machine.adopt(Step.credential("expired"), now: 0)
        let actions = Step.arrive(&machine, staleGeneration: 1).actions
        #expect(!actions.schedulePump)
        #expect(actions.refresh != nil)
        #expect(actions.queue == .suspend)
    }

    @Test func aRefreshedTokenRejectedWhileStillFreshCountsAgainstTheWindow() {
        let window = RefreshWindow(maximumRefreshes: 1, interval: 60)
        var (machine, attempt, _) = Step.heldByRefresh(window: window)
        _ = machine.refreshEnded(attempt: attempt, .refreshed(Step.credential("new"), .fresh), now: 1)
        _ = Step.pumpAndDeliver(&machine, now: 1)
        let rejected = Step.arrive(&machine, at: 2, rejectedHeader: "Bearer new").actions
        #expect(rejected.outcome == "fail excessiveRefresh")
        #expect(
            rejected.eventTexts == [
                "request waiting (1 queued)", "refresh refused: \(RefreshQueueError.excessiveRefresh)",
            ])
    }
}
