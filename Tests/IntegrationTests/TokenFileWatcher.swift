import Foundation
import RefreshQueue
import TestSupport

/// Reads a token file every couple of milliseconds on a thread of its own while other processes
/// write it (and are killed while they do), counting the reads and every one that did not parse.
final class TokenFileWatcher: Sendable {
    struct Figures: Sendable {
        var reads = 0
        var failures = 0
    }

    private let store: FileAuthenticationStore<OAuth2Token>
    private let figures = Protected(Figures())
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
        Thread.detachNewThread {
            while !stopped.current {
                do {
                    _ = try store.read()
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

    /// Stops watching and returns what it saw.
    func stop() -> Figures {
        stopped.withLock { $0 = true }
        finished.wait()
        return figures.current
    }
}
