import Foundation

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
    private let lock = NSLock()
    private var stopped = false
    private var connections: [Int32] = []

    init(reply: [UInt8]?, thenClose: Bool = true) throws {
        self.reply = reply
        self.thenClose = thenClose
        #if canImport(Darwin)
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, $0, &length) == 0
            }
        }
        guard listening else {
            close(listener)
            throw CocoaError(.featureUnsupported)
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
    }

    func stop() {
        lock.lock()
        let open = stopped ? [] : connections + [listener]
        stopped = true
        lock.unlock()
        for descriptor in open {
            shutdown(descriptor, Int32(SHUT_RDWR))
            close(descriptor)
        }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            lock.lock()
            if stopped {
                lock.unlock()
                close(connection)
                return
            }
            connections.append(connection)
            lock.unlock()
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
        guard count > 0, let reply else { return }
        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if thenClose { shutdown(connection, Int32(SHUT_RDWR)) }
    }
}
