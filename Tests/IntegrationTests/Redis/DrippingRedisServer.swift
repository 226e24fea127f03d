import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A hostile "Redis" on 127.0.0.1 that answers slowly: for each connection it reads what the
/// client sends, sends `burst` at once, then `drip` a few bytes at a time with a pause between,
/// and closes when it has sent everything, after `duration` seconds, or when stopped.
final class DrippingRedisServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let burst: [UInt8]
    private let drip: [UInt8]
    private let chunk: Int
    private let pause: TimeInterval
    private let duration: TimeInterval
    /// Guards `stopped` and `connections`.
    private let condition = NSCondition()
    private var stopped = false
    private var connections: [Int32] = []

    init(burst: [UInt8], drip: [UInt8], chunk: Int, pause: TimeInterval, duration: TimeInterval) throws {
        self.burst = burst
        self.drip = drip
        self.chunk = max(1, chunk)
        self.pause = pause
        self.duration = duration
        let (listener, port) = try LoopbackServer.listeningSocket()
        self.listener = listener
        self.port = Int(port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Shuts every socket down; each is closed by the thread that owns it.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in connections { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { break }
            condition.lock()
            if stopped {
                condition.unlock()
                close(connection)
                break
            }
            connections.append(connection)
            condition.unlock()
            Thread.detachNewThread { [self] in
                serve(connection)
                shutdown(connection, Int32(SHUT_RDWR))
                close(connection)
            }
        }
        close(listener)
    }

    private func serve(_ connection: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        guard count > 0, LoopbackServer.sendAll(burst, to: connection) else { return }
        let end = ProcessInfo.processInfo.systemUptime + duration
        var offset = 0
        while offset < drip.count, ProcessInfo.processInfo.systemUptime < end, !isStopped {
            let next = min(offset + chunk, drip.count)
            guard LoopbackServer.sendAll(Array(drip[offset..<next]), to: connection) else { return }
            offset = next
            Thread.sleep(forTimeInterval: pause)
        }
    }
}
