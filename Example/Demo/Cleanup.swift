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
/// status 128 + the signal's number. A closed standard output (`SIGPIPE`, when piped into `head`)
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

    /// Kills `process` should the walkthrough be interrupted before it ends.
    func register(process: Int32) {
        lock.lock()
        defer { lock.unlock() }
        processes.insert(process)
    }

    /// `process` has ended.
    func unregister(process: Int32) {
        lock.lock()
        defer { lock.unlock() }
        processes.remove(process)
    }

    /// Deletes `directory` should the walkthrough be interrupted before it does.
    func register(directory: URL) {
        lock.lock()
        defer { lock.unlock() }
        directories.insert(directory)
    }

    /// `directory` is gone.
    func unregister(directory: URL) {
        lock.lock()
        defer { lock.unlock() }
        directories.remove(directory)
    }

    private func end(signal number: Int32) {
        lock.lock()
        let (processes, directories) = (self.processes, self.directories)
        lock.unlock()
        for process in processes {
            kill(process, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(process, &status, 0)
        }
        for directory in directories {
            try? FileManager.default.removeItem(at: directory)
        }
        exit(128 + number)
    }
}
