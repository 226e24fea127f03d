import Dispatch
import Testing

@testable import RefreshQueue

/// One timer watches the deadlines of every transfer in flight: it must never be set later than
/// the earliest deadline still watched, and it must expire exactly the entries whose deadline
/// passed.
@Suite("Deadline schedule")
struct DeadlineScheduleTests {
    private static func time(_ seconds: UInt64) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: 1_000_000_000 + seconds * 1_000_000_000)
    }

    @Test func theTimerMovesOnlyForAnEarlierDeadlineAndFiresForTheEarliestLeft() {
        var schedule = DeadlineSchedule<String>()
        let (a, b, c) = (schedule.makeID(), schedule.makeID(), schedule.makeID())
        #expect(Set([a, b, c]).count == 3)
        let setFor = [
            schedule.add("a", id: a, deadline: Self.time(30)), schedule.add("b", id: b, deadline: Self.time(40)),
            schedule.add("c", id: c, deadline: Self.time(10)),
        ]
        #expect(setFor == [Self.time(30), nil, Self.time(10)])
        #expect(schedule.armedAt == Self.time(10))
        // The earliest ends first: the timer fires for nothing, and moves to the next deadline.
        var removed = schedule.remove(c)
        #expect(removed)
        var (expired, rearm) = schedule.fire(now: Self.time(10))
        #expect(expired.isEmpty && rearm == Self.time(30))
        (expired, rearm) = schedule.fire(now: Self.time(35))
        #expect(expired == ["a"] && rearm == Self.time(40))
        // A transfer whose deadline passed learns it when it ends.
        removed = schedule.remove(a)
        #expect(!removed)
        removed = schedule.remove(b)
        #expect(removed)
        (expired, rearm) = schedule.fire(now: Self.time(40))
        #expect(expired.isEmpty && rearm == nil && schedule.armedAt == nil && schedule.count == 0)
        // Unset, the next deadline sets it again, however late.
        let d = schedule.makeID()
        let setAgain = schedule.add("d", id: d, deadline: Self.time(1_000))
        #expect(setAgain == Self.time(1_000))
    }

    @Test(arguments: 0..<20)
    func randomSchedulesNeverLetADeadlinePassUnwatched(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var schedule = DeadlineSchedule<UInt64>()
        var watched: [UInt64: UInt64] = [:]  // id -> deadline, in seconds
        var now: UInt64 = 0
        var timer: UInt64?  // when the real timer would fire
        for step in 0..<2_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let id = schedule.makeID()
                let deadline = now + UInt64.random(in: 1...50, using: &random)
                watched[id] = deadline
                if let rearm = schedule.add(id, id: id, deadline: Self.time(deadline)) {
                    timer = rearm.uptimeNanoseconds / 1_000_000_000 - 1
                }
            case 5..<8:
                guard let id = watched.keys.sorted().randomElement(using: &random) else { continue }
                let removed = schedule.remove(id)
                #expect(removed, "step \(step): a watched transfer was lost")
                watched[id] = nil
            default:
                // Time passes to the timer, if set, or a little.
                now = timer.map { max(now, $0) } ?? now + 1
                guard timer != nil else { continue }
                let (expired, rearm) = schedule.fire(now: Self.time(now))
                let due = watched.filter { $0.value <= now }.keys
                #expect(Set(expired) == Set(due), "step \(step): expired the wrong transfers")
                for id in due { watched[id] = nil }
                timer = rearm.map { $0.uptimeNanoseconds / 1_000_000_000 - 1 }
            }
            if let earliest = watched.values.min() {
                #expect(timer.map { $0 <= earliest } == true, "step \(step): the timer is set past a deadline")
            }
            #expect(schedule.count == watched.count)
        }
    }

    /// A hung server: thousands of transfers time out one after another, each firing taking
    /// exactly the one whose deadline passed, in deadline order, whatever order they were added in.
    @Test func transfersTimingOutOneAfterAnotherAreTakenOneByOneInDeadlineOrder() {
        var schedule = DeadlineSchedule<UInt64>()
        var random = SeededRandom(seed: 7)
        let seconds = Array(1...5_000 as ClosedRange<UInt64>).shuffled(using: &random)
        for second in seconds {
            _ = schedule.add(second, id: schedule.makeID(), deadline: Self.time(second))
        }
        #expect(schedule.armedAt == Self.time(1))
        var taken: [UInt64] = []
        while let armed = schedule.armedAt {
            let (expired, rearm) = schedule.fire(now: armed)
            #expect(expired.count == 1, "a firing took \(expired.count) transfers")
            taken += expired
            #expect(rearm == schedule.armedAt)
        }
        #expect(taken == Array(1...5_000))
        #expect(schedule.count == 0 && schedule.heapPlaces == 0)
    }

    /// Transfers that end before their deadline do not pile up: once their places outnumber the
    /// transfers still watched, the heap keeps only those, and the timer still fires for the
    /// earliest of them.
    @Test func placesLeftByEndedTransfersAreDroppedAndTheRestStillExpire() {
        var schedule = DeadlineSchedule<UInt64>()
        var ids: [UInt64] = []
        for second in 1...10_000 as ClosedRange<UInt64> {
            let id = schedule.makeID()
            ids.append(id)
            _ = schedule.add(second, id: id, deadline: Self.time(second))
        }
        // Every transfer but each hundredth ends in time.
        for (index, id) in ids.enumerated() where (index + 1) % 100 != 0 {
            let removed = schedule.remove(id)
            #expect(removed)
        }
        #expect(schedule.count == 100)
        #expect(schedule.heapPlaces <= 2 * schedule.count + 64, "\(schedule.heapPlaces) places for 100 transfers")
        // The timer was set for the first deadline: it fires for nothing, then for each left.
        var (expired, rearm) = schedule.fire(now: Self.time(1))
        #expect(expired.isEmpty && rearm == Self.time(100))
        (expired, rearm) = schedule.fire(now: Self.time(5_050))
        #expect(expired == Array(stride(from: 100, through: 5_000, by: 100)) && rearm == Self.time(5_100))
        (expired, rearm) = schedule.fire(now: Self.time(20_000))
        #expect(expired.count == 50 && rearm == nil && schedule.heapPlaces == 0)
    }
}
