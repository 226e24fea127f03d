import Foundation
import TestSupport
import Workload

/// An executable of this package, built next to the tests by `swift test`.
enum BuiltExecutable {
    static func url(named name: String) -> URL? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }
}

/// A `RefreshWorker` child process: its output lines as they come, a way to wait for one, to stop
/// it (closing its standard input) and to kill it.
final class ChildWorker: Sendable {
    struct LaunchError: Error, CustomStringConvertible {
        var description: String
    }

    private struct State {
        var lines: [String] = []
        var partial = Data()
        var exited = false
        var waiters: [(id: Int, matches: @Sendable (String) -> Bool, continuation: CheckedContinuation<Bool, Never>)] =
            []
        var nextWaiter = 0
    }

    private let process: Process
    private let input: Pipe
    private let state = Protected(State())

    /// The process id.
    var pid: Int32 { process.processIdentifier }
    /// Every line printed so far.
    var lines: [String] { state.current.lines }

    /// Starts `RefreshWorker` with `arguments`, and `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        guard let executable = BuiltExecutable.url(named: "RefreshWorker") else {
            throw LaunchError(description: "RefreshWorker is not built next to the tests: run swift build")
        }
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // A thread of its own doing blocking reads, rather than a `readabilityHandler`: on Linux
        // the handler's dispatch source can outlive the pipe's descriptor, and libdispatch then
        // crashes on events for a descriptor number that was closed and reused.
        let state = self.state
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            while true {
                let data = reader.availableData
                Self.received(data, into: state)
                if data.isEmpty { break }
            }
            try? reader.close()
        }
    }

    /// Adds what the worker printed to its lines (`data` empty: it closed its output) and wakes
    /// the waits it satisfies.
    private static func received(_ data: Data, into state: Protected<State>) {
        let ready = state.withLock { state in
            if data.isEmpty {
                state.exited = true
            } else {
                state.partial.append(data)
            }
            while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self)
                state.partial.removeSubrange(state.partial.startIndex...newline)
                state.lines.append(line)
            }
            var ready: [(CheckedContinuation<Bool, Never>, Bool)] = []
            state.waiters.removeAll { waiter in
                if state.lines.contains(where: waiter.matches) {
                    ready.append((waiter.continuation, true))
                    return true
                }
                if state.exited {
                    ready.append((waiter.continuation, false))
                    return true
                }
                return false
            }
            return ready
        }
        for (continuation, found) in ready { continuation.resume(returning: found) }
    }

    /// Waits until a line satisfying `matches` has been printed; `false` if the process ended
    /// without printing one, or after `timeout` seconds.
    func waitForLine(timeout: TimeInterval = 60, where matches: @escaping @Sendable (String) -> Bool) async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let answer: Bool? = self.state.withLock { state in
                        if state.lines.contains(where: matches) { return true }
                        // Timed out before this wait was registered: the timeout's clean-up
                        // below has looked already, so nothing would ever resume it.
                        if state.exited || Task.isCancelled { return false }
                        state.waiters.append((id, matches, continuation))
                        return nil
                    }
                    if let answer { continuation.resume(returning: answer) }
                }
            }
            group.addTask {
                // check-apple: 32-bit safe (a test's timeout of minutes; UInt64 nanoseconds last 584 years)
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            // On timeout, release this wait's continuation so that the group can end.
            let stale = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            stale?.resume(returning: false)
            return first
        }
    }

    /// Closes the worker's standard input (its signal to finish) and waits for its result line;
    /// kills the worker if none comes within `timeout` seconds.
    func finish(timeout: TimeInterval = 60) async -> [String: String]? {
        try? input.fileHandleForWriting.close()
        guard await waitForLine(timeout: timeout, where: { $0.hasPrefix("result ") }) else {
            kill()
            return nil
        }
        return result
    }

    /// The fields of the result line, if printed.
    var result: [String: String]? { Tally.parseResult(lines) }

    /// Kills the worker with SIGKILL.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits for the process to exit and returns its status.
    func waitUntilExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}
