import Foundation

/// Requests sent by a fixed number of workers for a fixed time, and how they ended.
struct LoopbackArm: Sendable {
    /// Responses with status 200.
    var succeeded = 0
    /// Responses with any other status.
    var unexpectedStatus = 0
    /// Requests that threw.
    var errors = 0
    /// Seconds from the start until the last worker finished.
    var seconds = 0.0
    /// CPU seconds the whole process (client and stub) used meanwhile.
    var cpuSeconds = 0.0

    /// Completed requests (any status) per second.
    var requestsPerSecond: Double {
        seconds > 0 ? Double(completed) / seconds : 0
    }

    /// Completed requests, any status.
    var completed: Int {
        succeeded + unexpectedStatus
    }

    /// Microseconds of CPU time per completed request, client and stub together.
    var cpuMicrosecondsPerRequest: Double {
        completed > 0 ? cpuSeconds * 1_000_000 / Double(completed) : .nan
    }

    /// The counts and durations of `rounds` added together.
    static func total(of rounds: some Sequence<LoopbackArm>) -> LoopbackArm {
        rounds.reduce(into: LoopbackArm()) { $0.add($1) }
    }

    /// Adds another round's counts and durations to these.
    mutating func add(_ other: LoopbackArm) {
        succeeded += other.succeeded
        unexpectedStatus += other.unexpectedStatus
        errors += other.errors
        seconds += other.seconds
        cpuSeconds += other.cpuSeconds
    }

    /// Runs `workers` concurrent loops of `send` (which returns the HTTP status) for `seconds`.
    static func run(workers: Int, seconds: Double, send: @escaping @Sendable () async throws -> Int) async
        -> LoopbackArm
    {
        let cpuStart = ProcessCPU.seconds()
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(seconds * 1_000_000_000)
        var total = await withTaskGroup(of: LoopbackArm.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    var arm = LoopbackArm()
                    while monotonicNanoseconds() < deadline {
                        do {
                            if try await send() == 200 {
                                arm.succeeded += 1
                            } else {
                                arm.unexpectedStatus += 1
                            }
                        } catch {
                            arm.errors += 1
                        }
                    }
                    return arm
                }
            }
            var total = LoopbackArm()
            for await arm in group {
                total.succeeded += arm.succeeded
                total.unexpectedStatus += arm.unexpectedStatus
                total.errors += arm.errors
            }
            return total
        }
        total.seconds = nanosecondsSince(start) / 1_000_000_000
        total.cpuSeconds = ProcessCPU.seconds() - cpuStart
        return total
    }
}
