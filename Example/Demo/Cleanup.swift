import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What must not outlive the walkthrough however it ends: the processes it started (workers,
/// `redis-server`) and the directories it made (the token file's, the Redis data).
///
/// A normal end removes each itself. On Ctrl-C (`SIGINT`), `SIGTERM` or `SIGHUP` the processes
/// still registered are killed and the directories deleted, then the walkthrough exits with
/// status 128 + the signal's number. Workers ignore those signals (a terminal sends Ctrl-C to the
/// whole process group): their parent ends them, so that it is never told of a failed worker
/// first. A closed standard output (`SIGPIPE`, when piped into `head`)
/// no longer ends it: its lines go nowhere and it ends, and cleans up, as usual.
final class Cleanup: @unchecked Sendable {
    /// The walkthrough's one registry.
    static let shared = Cleanup()

    private let lock = NSLock()
    /// Guarded by `lock`.
    private var processes: Set<Int32> = []
    /// Guarded by `lock`.
    private var directories: Set<URL> = []
    /// Guarded by `lock`.
    private var sources: [any DispatchSourceSignal] = []
    /// The signal being handled, if any. Guarded by `lock`.
    private var interruption: Int32?
    private let queue = DispatchQueue(label: "Example.cleanup")

    /// Handles the signals above from now on (the parent process calls it once, first).
    func installSignalHandlers() {
        signal(SIGPIPE, SIG_IGN)
        lock.lock()
        defer { lock.unlock() }
        guard sources.isEmpty else { return }
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in end(signal: number) }
            source.resume()
            sources.append(source)
        }
    }

    /// For a worker: the signals above are its parent's to handle.
    static func ignoreInterruptions() {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
        }
    }

    /// Ends the process with `status`, unless an interruption is being handled: that ends it.
    func exit(_ status: Int32) -> Never {
        while isInterrupted {
            pause()
        }
        Foundation.exit(status)
    }

    /// Prints `message` to standard error and ends the process with status 1, unless an
    /// interruption is being handled: then the failure is the interruption's doing (a worker it
    /// killed), not news, and the interruption ends the process.
    func fail(_ message: String) -> Never {
        if !isInterrupted {
            say(message, to: STDERR_FILENO)
        }
        exit(1)
    }

    /// Kills `process` should the walkthrough be interrupted before it ends; at once, if it is
    /// being interrupted already (a worker that started as the others were killed).
    func register(process: Int32) {
        lock.lock()
        let interrupted = interruption != nil
        if !interrupted { processes.insert(process) }
        lock.unlock()
        if interrupted { kill(process, SIGKILL) }
    }

    /// `process` has ended.
    func unregister(process: Int32) {
        locked { _ = $0.processes.remove(process) }
    }

    /// Deletes `directory` should the walkthrough be interrupted before it does.
    func register(directory: URL) {
        locked { _ = $0.directories.insert(directory) }
    }

    /// `directory` is gone.
    func unregister(directory: URL) {
        locked { _ = $0.directories.remove(directory) }
    }

    /// Whether an interruption is being handled.
    private var isInterrupted: Bool {
        lock.lock()
        defer { lock.unlock() }
        return interruption != nil
    }

    private func locked(_ change: (Cleanup) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(self)
    }

    private func end(signal number: Int32) {
        lock.lock()
        interruption = number
        let (processes, directories) = (self.processes, self.directories)
        lock.unlock()
        for process in processes {
            kill(process, SIGKILL)
        }
        // Gone for good before their files go: a server still writing would put them back. (They
        // may have been reaped already, by `Process`: then `kill` finds nobody.)
        let deadline = Date().addingTimeInterval(5)
        for process in processes {
            var status: Int32 = 0
            while waitpid(process, &status, WNOHANG) == 0 || kill(process, 0) == 0, Date() < deadline {
                usleep(1_000)
            }
        }
        for directory in directories {
            for _ in 0..<50 where FileManager.default.fileExists(atPath: directory.path) {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        // Not `exit`: the main flow may be ending too, and only one of them may run `atexit` work.
        _exit(128 + number)
    }
}
