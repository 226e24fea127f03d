import Foundation
import Workload

/// `concurrency` loops sending requests until standard input closes (the parent's way to stop
/// it; the parent may also kill it), then `result …`.
///
/// Prints `ready` once its first request has ended, and `reauth` the moment
/// `onReauthenticationRequired` is called. From then on the app would show its login screen: the
/// loops send five more requests between them (counted as `afterReauth` and by kind), print
/// `relogin-checked`, and send nothing more.
struct KillRun {
    let options: WorkerOptions

    private static let requestsAfterReauthentication = 5

    func run() async {
        let tally = Tally()
        let reauthenticated = Shared(false)
        let workload: Workload
        do {
            workload = try Workload(options: options, tally: tally) { _ in
                tally.count("reauth")
                reauthenticated.update { $0 = true }
                say("reauth")
            }
        } catch {
            say("error \(error)")
            return
        }
        let stopped = Shared(false)
        Thread.detachNewThread {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            stopped.update { $0 = true }
        }
        let afterReauthentication = Shared(0)
        let ended = Shared(0)
        await Workload.onThreads(options.concurrency) { _ in
            let connection = Workload.Connection()
            while !stopped.value {
                guard reauthenticated.value else {
                    workload.send(on: connection)
                    if ended.update({
                        $0 += 1
                        return $0
                    }) == 1 {
                        say("ready")
                    }
                    continue
                }
                let number = afterReauthentication.update {
                    $0 += 1
                    return $0
                }
                guard number <= Self.requestsAfterReauthentication else {
                    // The app shows its login screen: nothing is sent until the parent stops us.
                    Thread.sleep(forTimeInterval: 0.02)
                    continue
                }
                let kind = workload.send(on: connection)
                tally.count("afterReauth")
                tally.count("afterReauth.\(kind)")
                if number == Self.requestsAfterReauthentication { say("relogin-checked") }
            }
        }
        say(tally.resultLine())
    }
}
