import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A hostile "Redis" on 127.0.0.1: for every connection it reads what the client sends, then
/// answers with `reply` (the same bytes to every connection) and, when `thenClose`, closes; with
/// `reply` nil it never answers at all.
final class ScriptedRedisServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let reply: [UInt8]?
    private let thenClose: Bool
    /// Guards `stopped`, `connections` and `requests`; serving threads wait on it for the stop.
    private let condition = NSCondition()
    private var stopped = false
    private var connections: [Int32] = []
    /// How many connections have sent something.
    private var requests = 0

    init(reply: [UInt8]?, thenClose: Bool = true) throws {
        self.reply = reply
        self.thenClose = thenClose
        let (listener, port) = try LoopbackServer.listeningSocket()
        self.listener = listener
        self.port = Int(port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Shuts every socket down, which wakes the threads blocked on them. Each socket is closed
    /// by the thread that owns it, never here: a descriptor closed under a thread still using it
    /// may be reused by another test's socket, which that thread would then read or shut down.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in connections { shutdown(descriptor, Int32(SHUT_RDWR)) }
        condition.broadcast()
    }

    /// Waits until `count` connections have sent something; `false` after `timeout` seconds.
    func waitForRequests(_ count: Int, timeout: TimeInterval = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while requests < count {
            guard condition.wait(until: deadline) else { return requests >= count }
        }
        return true
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
            Thread.detachNewThread { [self] in serveThenClose(connection) }
        }
        close(listener)
    }

    private func serve(_ connection: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return }
        condition.lock()
        requests += 1
        condition.broadcast()
        condition.unlock()
        guard let reply else { return }
        // Every byte before the close: a blocking send may still return having sent only part.
        guard LoopbackServer.sendAll(reply, to: connection) else { return }
        if thenClose { shutdown(connection, Int32(SHUT_WR)) }
    }

    /// Answers one connection, then holds it open until the server stops, and closes it.
    private func serveThenClose(_ connection: Int32) {
        serve(connection)
        condition.lock()
        while !stopped { condition.wait() }
        condition.unlock()
        close(connection)
    }
}
