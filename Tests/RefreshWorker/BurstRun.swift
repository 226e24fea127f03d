import Foundation
import Workload

/// `requests` requests from `concurrency` loops, then `result …`. Prints `ready` once the
/// workload is set up, and waits for a line on standard input before the first request, so
/// that the parent can start every worker at once.
struct BurstRun {
    let options: WorkerOptions

    func run() async {
        let tally = Tally()
        guard let workload = Workload.started(options: options, tally: tally) else { return }
        say("ready")
        _ = readLine()
        let next = Shared(0)
        let total = options.requests
        await Workload.onThreads(options.concurrency) { loop in
            let connection = Workload.Connection()
            while next.update({ (taken: inout Int) -> Bool in
                defer { taken += 1 }
                return taken < total
            }) {
                workload.send(on: connection, withCallback: loop % 2 == 1)
            }
        }
        say(tally.resultLine())
    }
}
