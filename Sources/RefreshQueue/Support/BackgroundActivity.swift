import Foundation

/// Keeps an iOS, tvOS or watchOS app running while it holds the cross-process lock of a refresh.
///
/// iOS terminates a suspended app that holds a file lock in a shared App Group container (crash
/// code `0xdead10cc`). An expiring-activity assertion (`ProcessInfo.performExpiringActivity`)
/// asks the system for time to finish; when the system takes it back, `onExpiry` runs at once:
/// the caller releases the lock and fails the refresh. On other platforms there is nothing to
/// ask for, and `onExpiry` never runs.
final class BackgroundActivity: Sendable {
    private let finished = Locked(false)
    #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
    private let release = DispatchSemaphore(value: 0)
    #endif

    private init() {}

    /// Starts the activity.
    static func begin(reason: String, onExpiry: @escaping @Sendable () -> Void) -> BackgroundActivity {
        let activity = BackgroundActivity()
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason) { expired in
            if expired {
                // Called again, on another thread, when the system takes the time back (or at
                // once, when it grants none).
                onExpiry()
                activity.end()
            } else {
                // The assertion lasts as long as this block runs.
                activity.release.wait()
            }
        }
        #endif
        return activity
    }

    /// Ends the activity; later calls do nothing.
    func end() {
        let first = finished.withLock { finished in
            defer { finished = true }
            return !finished
        }
        guard first else { return }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        release.signal()
        #endif
    }
}

/// The system took back the background time a refresh was running in: it is failed as a network
/// failure would be (it does not count against the refresh window), and tried again later.
struct BackgroundTimeExpired: RefreshFailure, CustomStringConvertible {
    var isTransportFailure: Bool { true }
    var description: String { "The system ended the app's background time while the token was being refreshed." }
}
