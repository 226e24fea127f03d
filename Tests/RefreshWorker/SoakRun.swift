import Foundation
import Workload

/// The soak's workload for `seconds` from `concurrency` loops, then `result …` with the counts and
/// the resident memory after the warm-up (`rssWarm`) and at the end (`rssEnd`).
struct SoakRun {
    let options: WorkerOptions

    func run() async {
        let tally = Tally()
        guard let workload = Workload.started(options: options, tally: tally) else { return }
        let warm = Shared(0)
        async let measured: Void = {
            try? await Task.sleep(nanoseconds: UInt64(options.warmUp * 1e9))
            warm.update { $0 = ResidentMemory.bytes() }
        }()
        await Workload.run([workload], concurrency: options.concurrency, seconds: options.seconds)
        await measured
        say(tally.resultLine(extra: ["rssWarm": String(warm.value), "rssEnd": String(ResidentMemory.bytes())]))
    }
}
