import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection to a Redis server, with a deadline on every wait.
///
/// Blocking calls with `poll` in front of each: a server that stops answering costs at most the
/// deadline, never a hung thread. Not thread-safe: ``RedisClient`` owns one under its lock.
final class RedisSocket {
    private var descriptor: Int32

    /// Connects to `host`:`port` before `deadline` (monotonic seconds).
    ///
    /// Name resolution itself has no deadline (the system resolver offers none); use an address
    /// or a name in `/etc/hosts` when that matters.
    init(host: String, port: Int, deadline: TimeInterval) throws(RedisError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .connectionFailed("\(host) does not resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var lastError: RedisError = .connectionFailed("\(host) has no address")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            do {
                descriptor = try Self.connect(address.pointee, host: host, port: port, deadline: deadline)
                return
            } catch {
                lastError = error
                if case .timedOut = error { throw error }
            }
        }
        throw lastError
    }

    deinit {
        close(descriptor)
    }

    private static func connect(_ address: addrinfo, host: String, port: Int, deadline: TimeInterval)
        throws(RedisError) -> Int32
    {
        // Close-on-exec: a child process the service starts never inherits the connection (it
        // would keep it open after this process dropped it).
        #if canImport(Glibc)
        let type = address.ai_socktype | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = address.ai_socktype
        #endif
        let socketDescriptor = socket(address.ai_family, type, address.ai_protocol)
        guard socketDescriptor >= 0 else { throw .connectionFailed("socket() failed (\(errnoName()))") }
        var keep = false
        defer { if !keep { close(socketDescriptor) } }
        let descriptorFlags = fcntl(socketDescriptor, F_GETFD)
        guard descriptorFlags >= 0, fcntl(socketDescriptor, F_SETFD, descriptorFlags | FD_CLOEXEC) == 0 else {
            throw .connectionFailed("fcntl() failed (\(errnoName()))")
        }
        let flags = fcntl(socketDescriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(socketDescriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw .connectionFailed("fcntl() failed (\(errnoName()))")
        }
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(socketDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        if Glue.connect(socketDescriptor, address.ai_addr, address.ai_addrlen) != 0 {
            guard errno == EINPROGRESS else {
                throw .connectionFailed("\(host):\(port) refused the connection (\(errnoName()))")
            }
            guard try wait(socketDescriptor, for: Int16(POLLOUT), until: deadline) else {
                throw .timedOut("connecting to \(host):\(port)")
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(socketDescriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0, failure == 0 else {
                throw .connectionFailed("\(host):\(port) refused the connection (\(errnoName(failure)))")
            }
        }
        keep = true
        return socketDescriptor
    }

    /// Sends every byte of `bytes` before `deadline`.
    func send(_ bytes: [UInt8], deadline: TimeInterval, operation: String) throws(RedisError) {
        var offset = 0
        while offset < bytes.count {
            // `errno` is read in the closure, right after the call: nothing run in between may
            // overwrite it.
            let (sent, failure) = bytes.withUnsafeBytes { buffer in
                let sent = Glue.send(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                return (sent, sent < 0 ? errno : 0)
            }
            if sent > 0 {
                offset += sent
                continue
            }
            guard sent < 0, Self.isTransient(failure) else { throw .connectionClosed }
            guard try Self.wait(descriptor, for: Int16(POLLOUT), until: deadline) else { throw .timedOut(operation) }
        }
    }

    /// Whether the server closed the connection, or sent something nobody asked for, since the
    /// last reply was read: either way it cannot carry the next command. Looked at without
    /// waiting before each call, so that a connection the server dropped while it was idle (a
    /// restart, an idle timeout) is replaced before a command is lost to it.
    var isStale: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        return ready > 0 || (ready < 0 && errno != EINTR)
    }

    /// Receives what the server sent, at most `limit` bytes, waiting until `deadline`.
    ///
    /// Past the deadline it fails even when bytes are waiting: a server that keeps sending a few
    /// bytes of a reply that never completes must not hold the caller beyond it.
    func receive(limit: Int, deadline: TimeInterval, operation: String) throws(RedisError) -> [UInt8] {
        guard ProcessInfo.processInfo.systemUptime < deadline else { throw .timedOut(operation) }
        var chunk = [UInt8](repeating: 0, count: max(1, min(limit, 64 * 1024)))
        while true {
            let (count, failure) = chunk.withUnsafeMutableBytes { buffer in
                let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
                return (count, count < 0 ? errno : 0)
            }
            if count > 0 { return Array(chunk[0..<count]) }
            if count == 0 { throw .connectionClosed }
            guard Self.isTransient(failure) else { throw .connectionClosed }
            guard try Self.wait(descriptor, for: Int16(POLLIN), until: deadline) else { throw .timedOut(operation) }
        }
    }

    /// Waits until the socket is ready for `events`; `false` when `deadline` passed first.
    private static func wait(_ descriptor: Int32, for events: Int16, until deadline: TimeInterval) throws(RedisError)
        -> Bool
    {
        while true {
            let left = deadline - ProcessInfo.processInfo.systemUptime
            guard left > 0 else { return false }
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let milliseconds = Int32(saturating: (left * 1000).rounded(.up))
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { throw .connectionFailed("poll() failed (\(errnoName()))") }
        }
    }

    /// Whether a failed `send` or `recv` only has to wait or be retried: the connection is fine.
    private static func isTransient(_ code: Int32) -> Bool {
        code == EAGAIN || code == EWOULDBLOCK || code == EINTR
    }

    private static func errnoName(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}

/// The C functions whose names this file's methods reuse.
private enum Glue {
    static func connect(_ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
        #if canImport(Darwin)
        Darwin.connect(descriptor, address, length)
        #elseif canImport(Musl)
        Musl.connect(descriptor, address, length)
        #else
        Glibc.connect(descriptor, address, length)
        #endif
    }

    static func send(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
        Darwin.send(descriptor, bytes, count, 0)
        #elseif canImport(Musl)
        Musl.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        #else
        Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        #endif
    }
}
