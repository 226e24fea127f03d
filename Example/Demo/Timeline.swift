import Foundation

/// Prints what happens, one line per step, with the time since the walkthrough started.
final class Timeline: @unchecked Sendable {
    private let start = Date()
    private let lock = NSLock()

    func log(_ message: String) {
        let milliseconds = Int((Date().timeIntervalSince(start) * 1000).rounded())
        lock.lock()
        defer { lock.unlock() }
        say(String(format: "%6d ms  ", milliseconds) + message)
    }
}

/// Writes a line to standard output at once (unbuffered, so lines from several threads and
/// child processes stay whole and in order).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
