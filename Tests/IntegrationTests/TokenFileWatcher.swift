import Foundation
import RefreshQueue
import TestSupport

/// Reads a token file every couple of milliseconds on a thread of its own while other processes
/// write it (and are killed while they do), counting the reads and every one that did not parse,
/// and noting when it first read each refresh token.
final class TokenFileWatcher: Sendable {
    struct Figures: Sendable {
        var reads = 0
        var failures = 0
    }

    private let store: FileAuthenticationStore<OAuth2Token>
    private let figures = Protected(Figures())
    /// Each refresh token the file came to hold, with the uptime at which the read that first saw
    /// it started: a task of the test, which can wait long for a thread on a loaded machine, would
    /// see it seconds late.
    private let arrivals = Protected<[(uptime: TimeInterval, refreshToken: String?)]>([])
    private let stopped = Protected(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching the file at `url`.
    init(_ url: URL) throws {
        let figures = self.figures
        store = try FileAuthenticationStore<OAuth2Token>(fileURL: url) { event in
            switch event {
            case .corruptFile, .unreadableFile, .futureFormatVersion: figures.withLock { $0.failures += 1 }
            default: break
            }
        }
        let store = self.store
        let stopped = self.stopped
        let finished = self.finished
        let arrivals = self.arrivals
        Thread.detachNewThread {
            while !stopped.current {
                do {
                    // Taken before the read: what the read sees, the file held at that time or later.
                    let uptime = ProcessInfo.processInfo.systemUptime
                    let refreshToken = try store.read()?.refreshToken
                    arrivals.withLock {
                        if $0.last?.refreshToken != refreshToken { $0.append((uptime, refreshToken)) }
                    }
                } catch {
                    figures.withLock { $0.failures += 1 }
                }
                figures.withLock { $0.reads += 1 }
                Thread.sleep(forTimeInterval: 0.002)
            }
            finished.signal()
        }
    }

    /// The stored token now, or nil.
    var token: OAuth2Token? { store.load() }

    /// The uptime at which this watcher first read a refresh token, other than `previous`, in a
    /// read it started after `start`; nil if it has not yet.
    func firstRead(after start: TimeInterval, ofATokenOtherThan previous: String?) -> TimeInterval? {
        arrivals.current.first { $0.uptime > start && $0.refreshToken != nil && $0.refreshToken != previous }?.uptime
    }

    /// Stops watching and returns what it saw.
    func stop() -> Figures {
        stopped.withLock { $0 = true }
        finished.wait()
        return figures.current
    }
}
