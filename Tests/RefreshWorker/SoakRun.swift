import Foundation
import Workload

/// The soak's workload for `seconds` from `concurrency` loops, then `result …` with the counts, the
/// heap bytes in use after the warm-up (`heapWarm`) and at the end (`heapEnd`), and the resident
/// memory at the same two moments (`rssWarm`, `rssEnd`).
struct SoakRun {
    let options: WorkerOptions

    func run() async {
        let tally = Tally()
        guard let workload = Workload.started(options: options, tally: tally) else { return }
        let warm = Shared((heap: 0, resident: 0))
        async let measured: Void = {
            // check-apple: 32-bit safe (--warm-up is SoakTests.warmUp, at most 10 s, or 1 s)
            try? await Task.sleep(nanoseconds: UInt64(options.warmUp * 1e9))
            warm.update { $0 = (HeapInUse.bytes(), ResidentMemory.bytes()) }
        }()
        await Workload.run([workload], concurrency: options.concurrency, seconds: options.seconds)
        await measured
        say(
            tally.resultLine(extra: [
                "heapWarm": String(warm.value.heap), "heapEnd": String(HeapInUse.bytes()),
                "rssWarm": String(warm.value.resident), "rssEnd": String(ResidentMemory.bytes()),
            ]))
    }
}
