import Foundation

/// A child process started by `--processes`: this same program in `--worker` mode.
enum WorkerProcess {
    struct Outcome: Sendable {
        let index: Int
        let tally: Tally
    }

    /// Runs the worker, with `environment` added to this process's, to its end and reads the
    /// result line it prints.
    static func run(arguments: [String], environment: [String: String] = [:]) async throws -> Outcome {
        #if os(macOS) || os(Linux)
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        process.standardOutput = output
        let finished = Completion()
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        let child = process.processIdentifier
        Cleanup.shared.register(process: child)
        defer { Cleanup.shared.unregister(process: child) }
        // Read while it runs, so a full pipe can never block the child; on a thread of its own, as
        // the read blocks until the child ends: on Swift's task pool (one thread per core) it would
        // keep every other worker from starting.
        let reader = output.fileHandleForReading
        let data = await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            Thread { continuation.resume(returning: reader.readDataToEndOfFile()) }.start()
        }
        await finished.wait()
        let text = String(decoding: data, as: UTF8.self)
        // A worker exits 1 exactly when its result line counts errors. Anything else (a crash,
        // a kill, another status) happened after or instead of the line: after it, the worker
        // may have died saving a rotated token, which the line cannot tell.
        guard let outcome = parse(text), process.terminationReason == .exit,
            process.terminationStatus == (outcome.tally.snapshot.errors.isEmpty ? 0 : 1)
        else {
            let ending = process.terminationReason == .exit ? "exit status" : "signal"
            throw ExampleError.worker("\(ending) \(process.terminationStatus): \(text.suffix(300))")
        }
        return outcome
        #else
        throw ExampleError.worker("child processes are not available on this platform")
        #endif
    }

    /// `result <index> held=<first>/<later> <status>=<count>… errors=<count> <first error>`: what a
    /// worker tells the parent.
    static func resultLine(index: Int, tally: Tally) -> String {
        let (statuses, errors) = tally.snapshot
        let held = tally.held
        let counts = statuses.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return
            (["result", String(index), "held=\(held.first)/\(held.later)"] + counts + ["errors=\(errors.count)"]
            + errors.prefix(1)).joined(separator: " ")
    }

    private static func parse(_ output: String) -> Outcome? {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("result ") }) else { return nil }
        let fields = line.split(separator: " ").map(String.init)
        guard fields.count >= 3, let index = Int(fields[1]) else { return nil }
        let tally = Tally()
        var errorCount = 0
        for field in fields.dropFirst(2) {
            let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2, pair[0] == "held" {
                let parts = pair[1].split(separator: "/").compactMap { Int($0) }
                if parts.count == 2 { tally.setHeld(first: parts[0], later: parts[1]) }
                continue
            }
            guard pair.count == 2, let count = Int(pair[1]) else { continue }
            if pair[0] == "errors" {
                errorCount = count
            } else if let status = Int(pair[0]) {
                for _ in 0..<count { tally.record(status: status) }
            }
        }
        let firstError = fields.drop { !$0.hasPrefix("errors=") }.dropFirst().joined(separator: " ")
        for _ in 0..<errorCount {
            tally.record(errorText: firstError.isEmpty ? "error in process \(index)" : firstError)
        }
        return Outcome(index: index, tally: tally)
    }
}

/// A one-shot signal that an `async` caller can wait for.
final class Completion: @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: CheckedContinuation<Void, Never>?

    func signal() {
        lock.lock()
        signalled = true
        let waiter = self.waiter
        self.waiter = nil
        lock.unlock()
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if signalled {
                lock.unlock()
                continuation.resume()
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}
