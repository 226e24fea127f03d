#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The stub's server: one thread running a `poll()` loop over the listening socket, every client
/// connection and a wake-up pipe.
///
/// One thread serves everything. Requests to the stub are tiny and answered from memory, so a
/// single thread sustains far more than a test or benchmark on loopback can send, and it makes
/// the server easy to reason about: connections, buffers and timers belong to this thread alone,
/// and only `StubState` (behind its lock) and `LoopControl` are shared. Slow answers (token
/// latency) and lingering closes are timers, never sleeps, so one slow request delays no other.
///
/// `poll()` rather than epoll or kqueue because it is the same on Linux and Darwin; rebuilding
/// the descriptor array each round is linear in the number of connections, which for a few
/// thousand is microseconds.
final class EventLoop: @unchecked Sendable {
    // @unchecked: created on the thread calling `start()` and handed to the loop thread, which is
    // from then on the only one to touch it.

    /// Decides answers; shared with nothing mutable but the locked state.
    let router: Router
    private let listener: Int32
    private let control: LoopControl
    private let state: Protected<StubState>
    private var connections: [Connection] = []
    private var timers: [Timer] = []
    private var timerSequence: UInt64 = 0
    /// While set, accepting is paused because the process ran out of descriptors.
    private var acceptingResumesAt: Double?

    private struct Timer {
        enum Action {
            case reply(Connection, sequence: UInt64, produce: () -> Outcome)
            case lingerTimeout(Connection)
        }

        var deadline: Double
        /// Breaks ties so timers with the same deadline fire in scheduling order.
        var sequence: UInt64
        var action: Action
    }

    /// How long accepting pauses after `EMFILE`/`ENFILE`, so the loop does not spin on a
    /// listener it cannot drain.
    private static let acceptPause: Double = 0.1

    init(listener: Int32, control: LoopControl, router: Router, state: Protected<StubState>) {
        self.listener = listener
        self.control = control
        self.router = router
        self.state = state
    }

    /// Serves until `control.requestStop()`, then closes every connection and the listener and
    /// signals `control.finished`.
    func run() {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer {
            scratch.deallocate()
        }
        while !control.isStopRequested {
            runOnce(scratch: scratch)
        }
        let open = connections.count
        for connection in connections {
            connection.close()
        }
        connections = []
        timers = []
        Socket.close(listener)
        state.withLock { $0.counters.liveConnections -= open }
        control.finished.signal()
    }

    // MARK: - Scheduling, for connections

    /// Calls `produce` after `seconds` and hands its outcome to `connection`.
    ///
    /// `produce` runs even if the client has gone by then: the server did the work (issued or
    /// rotated tokens) and only the answer is lost, just as with a real server.
    func scheduleReply(
        for connection: Connection, sequence: UInt64, after seconds: Double, produce: @escaping () -> Outcome
    ) {
        addTimer(after: seconds, .reply(connection, sequence: sequence, produce: produce))
    }

    /// Closes `connection` after `seconds` if it is still lingering.
    func scheduleLingerTimeout(for connection: Connection, after seconds: Double) {
        addTimer(after: seconds, .lingerTimeout(connection))
    }

    private func addTimer(after seconds: Double, _ action: Timer.Action) {
        timerSequence += 1
        timers.append(Timer(deadline: MonotonicClock.now() + seconds, sequence: timerSequence, action: action))
    }

    // MARK: - One round

    private func runOnce(scratch: UnsafeMutableRawBufferPointer) {
        let pollIn = Int16(truncatingIfNeeded: POLLIN)
        let accepting = acceptingResumesAt == nil
        let polled = connections
        var descriptors: [pollfd] = []
        descriptors.reserveCapacity(polled.count + 2)
        descriptors.append(pollfd(fd: control.wakeReader, events: pollIn, revents: 0))
        descriptors.append(pollfd(fd: accepting ? listener : -1, events: pollIn, revents: 0))
        for connection in polled {
            descriptors.append(pollfd(fd: connection.descriptor, events: connection.pollEvents, revents: 0))
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), pollTimeout())
        if ready < 0 {
            // EINTR: just go round. Anything else (ENOMEM) is transient at best; back off a little
            // rather than spin.
            if errno != EINTR {
                usleep(1000)
            }
            return
        }
        if descriptors[0].revents != 0 {
            drainWakePipe(scratch: scratch)
        }
        if control.isStopRequested {
            return
        }
        let readable =
            pollIn | Int16(truncatingIfNeeded: POLLHUP) | Int16(truncatingIfNeeded: POLLERR)
            | Int16(truncatingIfNeeded: POLLNVAL)
        let writable = Int16(truncatingIfNeeded: POLLOUT)
        for (offset, connection) in polled.enumerated() {
            let revents = descriptors[offset + 2].revents
            if revents == 0 || connection.isClosed {
                continue
            }
            if revents & Int16(truncatingIfNeeded: POLLNVAL) != 0 {
                connection.close()
                continue
            }
            if revents & readable != 0 {
                if descriptors[offset + 2].events & pollIn != 0 {
                    connection.handleReadable(scratch: scratch, loop: self)
                } else if revents & writable == 0 {
                    connection.handleHangUp(loop: self)
                }
            }
            if revents & writable != 0 && !connection.isClosed {
                connection.handleWritable(loop: self)
            }
        }
        if accepting && descriptors[1].revents != 0 {
            acceptPending()
        }
        fireDueTimers()
        sweepClosedConnections()
    }

    /// Milliseconds until the earliest timer, or -1 to wait for I/O only.
    private func pollTimeout() -> Int32 {
        var earliest = timers.lazy.map(\.deadline).min()
        if let resume = acceptingResumesAt {
            earliest = min(earliest ?? resume, resume)
        }
        guard let deadline = earliest else {
            return -1
        }
        let milliseconds = ((deadline - MonotonicClock.now()) * 1000).rounded(.up)
        return Int32(max(0, min(milliseconds, 60_000)))
    }

    private func drainWakePipe(scratch: UnsafeMutableRawBufferPointer) {
        while read(control.wakeReader, scratch.baseAddress, scratch.count) > 0 {}
    }

    private func acceptPending() {
        var accepted = 0
        // Bounded so a connect storm cannot starve the connections already being served.
        accepting: for _ in 0..<512 {
            switch Socket.accept(listener: listener) {
            case .accepted(let descriptor):
                connections.append(Connection(descriptor: descriptor))
                accepted += 1
            case .wouldBlock:
                break accepting
            case .exhausted:
                acceptingResumesAt = MonotonicClock.now() + EventLoop.acceptPause
                break accepting
            case .retry:
                continue
            }
        }
        if accepted > 0 {
            state.withLock { $0.counters.liveConnections += accepted }
        }
    }

    private func fireDueTimers() {
        let now = MonotonicClock.now()
        if let resume = acceptingResumesAt, resume <= now {
            acceptingResumesAt = nil
        }
        guard timers.contains(where: { $0.deadline <= now }) else {
            return
        }
        let due = timers.filter { $0.deadline <= now }.sorted {
            ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence)
        }
        timers.removeAll { $0.deadline <= now }
        for timer in due {
            switch timer.action {
            case .reply(let connection, let sequence, let produce):
                let outcome = produce()
                if !connection.isClosed {
                    connection.deliver(outcome, sequence: sequence, loop: self)
                }
            case .lingerTimeout(let connection):
                connection.lingerExpired()
            }
        }
    }

    private func sweepClosedConnections() {
        let before = connections.count
        connections.removeAll { $0.isClosed }
        let closed = before - connections.count
        if closed > 0 {
            // Timers of closed connections stay until they fire; they find the connection closed.
            state.withLock { $0.counters.liveConnections -= closed }
        }
    }
}
