import Dispatch
import Foundation

/// Keeps an iOS, tvOS or watchOS app running while it holds the cross-process lock of a refresh
/// or a save: one activity of the caller's, ended by ``end()``.
///
/// iOS terminates a suspended app that holds a file lock in a shared App Group container (crash
/// code `0xdead10cc`). An expiring activity (`ProcessInfo.performExpiringActivity`) asks the
/// system for time to finish; when the system takes it back, `onExpiry` runs at once: the caller
/// releases the lock and fails the refresh. On other platforms there is nothing to ask for, and
/// `onExpiry` never runs.
final class BackgroundActivity: Sendable {
    private let activities: BackgroundActivities
    private let id: UInt64

    fileprivate init(_ activities: BackgroundActivities, id: UInt64) {
        self.activities = activities
        self.id = id
    }

    /// Starts an activity among the process's shared ones.
    static func begin(reason: String, onExpiry: @escaping @Sendable () -> Void) -> BackgroundActivity {
        BackgroundActivities.shared.begin(reason: reason, onExpiry: onExpiry)
    }

    /// Ends the activity; later calls, and calls after the system ended it, do nothing.
    func end() {
        activities.end(id)
    }
}

/// The system's expiring activities, as ``BackgroundActivities`` uses them: `block` runs with
/// `false` on a thread of the system's, and the time lasts as long as that call runs; it runs
/// again with `true`, on another thread, when the system takes the time back (or at once, with
/// `true` only, when it grants none).
protocol ExpiringActivitySystem: Sendable {
    func performExpiringActivity(reason: String, using block: @escaping @Sendable (_ expired: Bool) -> Void)
}

/// The activities of a process, all inside one expiring activity of the system's at a time.
///
/// The system keeps the time only while a block of the app's runs, which parks the thread it
/// runs on: one parked thread for every save and refresh in flight would take Dispatch's worker
/// threads away (a few dozen in all). So the first activity starts a system activity, later ones
/// join it, and the last one to end lets its thread go. When the system takes the time back,
/// every activity inside it expires at once.
final class BackgroundActivities: Sendable {
    /// The process's activities: the system's expiring activities on iOS, tvOS, watchOS and
    /// visionOS; none elsewhere (macOS and Linux do not suspend a process that holds a lock).
    static let shared: BackgroundActivities = {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return BackgroundActivities(system: ProcessInfoActivities())
        #else
        return BackgroundActivities(system: nil)
        #endif
    }()

    /// One system activity, parked on a thread of the system's until ``release()``.
    private final class Grant: Sendable {
        private let released = DispatchSemaphore(value: 0)

        /// Parks the calling thread (the system's) until the grant is released.
        func hold() { released.wait() }

        /// Lets the parked thread go; called once for each grant.
        func release() { released.signal() }
    }

    private enum Phase {
        case idle
        /// `grant` covers `holders`, the activities begun and not yet ended, with their
        /// `onExpiry`; never empty.
        case granted(Grant, holders: [UInt64: @Sendable () -> Void])
    }

    private struct State {
        var phase = Phase.idle
        var nextID: UInt64 = 0
    }

    private let system: (any ExpiringActivitySystem)?
    private let state = Locked(State())

    init(system: (any ExpiringActivitySystem)?) {
        self.system = system
    }

    /// Starts an activity: a system activity when none covers the others, else it joins that one.
    func begin(reason: String, onExpiry: @escaping @Sendable () -> Void) -> BackgroundActivity {
        guard let system else { return BackgroundActivity(self, id: 0) }
        let (id, newGrant) = state.withLock { state -> (UInt64, Grant?) in
            state.nextID += 1
            let id = state.nextID
            switch state.phase {
            case .idle:
                let grant = Grant()
                state.phase = .granted(grant, holders: [id: onExpiry])
                return (id, grant)
            case .granted(let grant, var holders):
                holders[id] = onExpiry
                state.phase = .granted(grant, holders: holders)
                return (id, nil)
            }
        }
        if let grant = newGrant {
            system.performExpiringActivity(reason: reason) { [self] expired in
                if expired {
                    expire(grant)
                } else {
                    grant.hold()
                }
            }
        }
        return BackgroundActivity(self, id: id)
    }

    /// Ends activity `id`; the last one inside a grant releases it.
    fileprivate func end(_ id: UInt64) {
        guard system != nil else { return }
        let emptied = state.withLock { state -> Grant? in
            guard case .granted(let grant, var holders) = state.phase, holders.removeValue(forKey: id) != nil
            else { return nil }
            state.phase = holders.isEmpty ? .idle : .granted(grant, holders: holders)
            return holders.isEmpty ? grant : nil
        }
        emptied?.release()
    }

    /// The system took `grant`'s time back: every activity inside it expires, and the next one
    /// asks for a new grant. Nothing happens for a grant that its activities ended already.
    private func expire(_ grant: Grant) {
        let expired = state.withLock { state -> [@Sendable () -> Void]? in
            guard case .granted(let current, let holders) = state.phase, current === grant else { return nil }
            state.phase = .idle
            return holders.sorted { $0.key < $1.key }.map(\.value)
        }
        guard let expired else { return }
        // The locks go first: the system may suspend the app as soon as the grant's block returns.
        for onExpiry in expired { onExpiry() }
        grant.release()
    }
}

#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
/// The system's own expiring activities.
private struct ProcessInfoActivities: ExpiringActivitySystem {
    func performExpiringActivity(reason: String, using block: @escaping @Sendable (Bool) -> Void) {
        ProcessInfo.processInfo.performExpiringActivity(withReason: reason, using: block)
    }
}
#endif

/// The system took back the background time a refresh was running in: it is failed as a network
/// failure would be (it does not count against the refresh window), and tried again later.
struct BackgroundTimeExpired: RefreshFailure, CustomStringConvertible {
    var isTransportFailure: Bool { true }
    var description: String { "The system ended the app's background time while the token was being refreshed." }
}
