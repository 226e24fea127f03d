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
}
