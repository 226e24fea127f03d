import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A proxy on 127.0.0.1 in front of a real server: it passes every byte both ways, except that
/// once a client sends a command containing `marker` (the first time only, over all
/// connections), the server's replies on that connection are read and thrown away from then on.
/// The command runs on the server; its client never learns the outcome. With `droppingTheCommand`,
/// that command never reaches the server instead: the proxy shuts the client's connection down on it.
final class ReplySwallowingProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let serverPort: Int
    private let marker: [UInt8]
    private let droppingTheCommand: Bool
    /// Guards every property below.
    private let condition = NSCondition()
    private var stopped = false
    private var triggered = false
    private var sockets: [Int32] = []
    private var swallowed = 0

    init(to serverPort: Int, swallowingRepliesAfter marker: String, droppingTheCommand: Bool = false) throws {
        self.serverPort = serverPort
        self.marker = Array(marker.utf8)
        self.droppingTheCommand = droppingTheCommand
        let (listener, port) = try LoopbackServer.listeningSocket()
        self.listener = listener
        self.port = Int(port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Bytes of replies (or of the dropped command) thrown away so far.
    var swallowedByteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return swallowed
    }

    /// Shuts every socket down; each is closed by the thread that owns it.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in sockets { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { break }
            let server = Self.connectToLoopback(port: serverPort)
            condition.lock()
            if stopped || server < 0 {
                condition.unlock()
                close(client)
                if server >= 0 { close(server) }
                if stopped { break } else { continue }
            }
            sockets += [client, server]
            condition.unlock()
            Thread.detachNewThread { [self] in relay(client: client, server: server) }
        }
        close(listener)
    }

    private func relay(client: Int32, server: Int32) {
        var swallowing = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var entries = [
            pollfd(fd: client, events: Int16(POLLIN), revents: 0),
            pollfd(fd: server, events: Int16(POLLIN), revents: 0),
        ]
        loop: while true {
            entries[0].revents = 0
            entries[1].revents = 0
            guard poll(&entries, 2, -1) > 0 else {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<2 where entries[index].revents != 0 {
                let from = entries[index].fd
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break loop }
                let bytes = Array(buffer[0..<count])
                if from == client {
                    if !swallowing, Self.contains(bytes, marker) {
                        condition.lock()
                        if !triggered {
                            triggered = true
                            swallowing = true
                            if droppingTheCommand {
                                swallowed += count
                                condition.unlock()
                                // The client sees the connection close at once.
                                shutdown(client, Int32(SHUT_RDWR))
                                break loop
                            }
                        }
                        condition.unlock()
                    }
                    guard LoopbackServer.sendAll(bytes, to: server) else { break loop }
                } else if swallowing {
                    condition.lock()
                    swallowed += count
                    condition.unlock()
                } else {
                    guard LoopbackServer.sendAll(bytes, to: client) else { break loop }
                }
            }
        }
        condition.lock()
        while !stopped { _ = condition.wait(until: Date().addingTimeInterval(0.05)) }
        condition.unlock()
        close(client)
        close(server)
    }

    private static func contains(_ bytes: [UInt8], _ marker: [UInt8]) -> Bool {
        guard bytes.count >= marker.count else { return false }
        for start in 0...(bytes.count - marker.count) where Array(bytes[start..<start + marker.count]) == marker {
            return true
        }
        return false
    }

    private static func connectToLoopback(port: Int) -> Int32 {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }
}
