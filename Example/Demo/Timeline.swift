import Foundation
import RefreshQueue

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Prints what happens, one line per step, with the time since the walkthrough started.
final class Timeline: @unchecked Sendable {
    private let start = Date()
    private let lock = NSLock()

    func log(_ message: String) {
        // Printed from the Double: converted to an Int, a long run would trap where Int has 32 bits.
        let milliseconds = (Date().timeIntervalSince(start) * 1000).rounded()
        lock.lock()
        defer { lock.unlock() }
        say(String(format: "%6.0f ms  ", milliseconds) + message)
    }
}

extension Timeline {
    /// Turns the closure's events into timeline lines. Events never contain a token.
    func report(_ event: RefreshEvent) {
        switch event {
        case .refreshStarted:
            log("refresh started; requests wait behind it")
        case .refreshAheadStarted:
            log("refresh ahead started; requests are still signed with the current token")
        case .refreshSucceeded(let duration):
            log("refresh succeeded in \(String(format: "%.0f", (duration * 1000).rounded())) ms")
        case .requestsResumed(let waiting):
            log("queue resumed: \(waiting) waiting \(waiting == 1 ? "request" : "requests") go out")
        case .refreshFailed, .refreshAheadFailed, .refreshTimedOut, .refreshRefused, .lateRefreshAdopted,
            .refreshAbandoned, .saveFailed, .requestSentUnsigned, .adoptedFromStore:
            log(event.description)
        case .authenticationLoaded, .requestWaiting, .refreshHeldRequests:
            break
        }
    }
}

/// Writes a line to standard output (or to `descriptor`) at once (unbuffered, so lines from
/// several threads and child processes stay whole and in order). When nobody reads any more (a
/// closed pipe), the line goes nowhere and the walkthrough goes on to its end.
func say(_ line: String, to descriptor: Int32 = STDOUT_FILENO) {
    var bytes = Array((line + "\n").utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(written)
    }
}
