import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket calls of a ``LoopbackRedirectReceiver``: a TCP listener on a loopback address, and
/// its connections, each wait bounded with `poll`.
enum LoopbackListener {
    /// A listening socket on `address`, on a port the system picks, and that port.
    static func open(_ address: LoopbackRedirectReceiver.Address) throws -> (Int32, UInt16) {
        let family = address == .ipv4 ? AF_INET : AF_INET6
        #if canImport(Glibc)
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #elseif canImport(Musl)
        let descriptor = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)
        #else
        let descriptor = socket(family, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw LoopbackRedirectError.listenFailed(errno: errno) }
        var keep = false
        defer { if !keep { close(descriptor) } }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let flags = fcntl(descriptor, F_GETFL, 0)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let port: UInt16?
        switch address {
        case .ipv4:
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            #if canImport(Darwin)
            socketAddress.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
            #endif
            port = bind(descriptor, to: socketAddress) { UInt16(bigEndian: $0.sin_port) }
        case .ipv6:
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_addr = in6addr_loopback
            #if canImport(Darwin)
            socketAddress.sin6_len = UInt8(MemoryLayout<sockaddr_in6>.size)
            #endif
            port = bind(descriptor, to: socketAddress) { UInt16(bigEndian: $0.sin6_port) }
        }
        guard let port, listen(descriptor, 8) == 0 else { throw LoopbackRedirectError.listenFailed(errno: errno) }
        keep = true
        return (descriptor, port)
    }

    /// Binds `descriptor` to `address` (a `sockaddr_in` or `sockaddr_in6`, port 0) and returns
    /// the port the system picked, read by `port` from the bound address; `nil` when it fails.
    private static func bind<Address>(
        _ descriptor: Int32, to address: Address, port: (Address) -> UInt16
    ) -> UInt16? {
        var address = address
        let size = socklen_t(MemoryLayout<Address>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glue.bind(descriptor, $0, size) }
        }
        guard bound == 0 else { return nil }
        var length = size
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return port(address)
    }

    /// A connection accepted within `seconds`, or `nil`.
    static func accept(_ listener: Int32, waitingAtMost seconds: TimeInterval) -> Int32? {
        var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, Int32(saturating: seconds * 1000)) > 0 else { return nil }
        let connection = Glue.accept(listener)
        guard connection >= 0 else {
            // Out of descriptors (EMFILE), say: the listener stays readable, so pause rather than spin.
            _ = poll(nil, 0, 50)
            return nil
        }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        let flags = fcntl(connection, F_GETFL, 0)
        _ = fcntl(connection, F_SETFL, flags | O_NONBLOCK)
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return connection
    }

    /// The request head that `connection` sends before `deadline`, at most `limit` bytes; given
    /// up as unreadable as soon as `stop` says so (it is asked at least every 200 ms).
    static func readHead(
        _ connection: Int32, limit: Int, until deadline: DispatchTime, unless stop: () -> Bool
    ) -> LoopbackHead {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        var searched = 0
        while true {
            // The blank line that ends the head: CR LF CR LF.
            while searched + 4 <= received.count {
                if received[searched] == 13, received[searched + 1] == 10, received[searched + 2] == 13,
                    received[searched + 3] == 10
                {
                    return searched + 4 > limit ? .tooLarge : .complete(Array(received[..<(searched + 4)]))
                }
                searched += 1
            }
            guard received.count <= limit else { return .tooLarge }
            let now = DispatchTime.now()
            guard now < deadline, !stop() else { return .unreadable }
            let milliseconds = Int32(saturating: Double(deadline.uptimeNanoseconds - now.uptimeNanoseconds) / 1e6)
            var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, min(200, max(1, milliseconds))) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return .unreadable
            }
        }
    }

    /// Sends `bytes` to `connection`, as far as it takes them within a second.
    static func send(_ bytes: [UInt8], to connection: Int32) {
        var offset = 0
        let deadline = DispatchTime.after(seconds: 1)
        while offset < bytes.count, DispatchTime.now() < deadline {
            let sent = bytes.withUnsafeBytes {
                Glue.send(connection, $0.baseAddress.map { $0 + offset }, $0.count - offset)
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                var entry = pollfd(fd: connection, events: Int16(POLLOUT), revents: 0)
                _ = poll(&entry, 1, 100)
            } else {
                return
            }
        }
    }

    /// Stops `descriptor` listening where the system allows it (a thread polling it also looks
    /// every 200 ms whether it should stop); the descriptor stays allocated until ``release(_:)``.
    static func shutDown(_ descriptor: Int32) {
        _ = Glue.shutdown(descriptor)
    }

    /// Closes `descriptor`.
    static func release(_ descriptor: Int32) {
        _ = close(descriptor)
    }
}

/// The C calls whose Swift names clash with this package's own (`send`, `accept`, `bind`, `shutdown`).
private enum Glue {
    static func accept(_ listener: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.accept(listener, nil, nil)
        #elseif canImport(Musl)
        return Musl.accept(listener, nil, nil)
        #else
        return Glibc.accept(listener, nil, nil)
        #endif
    }

    static func send(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
        #if canImport(Darwin)
        return Darwin.send(descriptor, bytes, count, 0)
        #elseif canImport(Musl)
        return Musl.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        #else
        return Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        #endif
    }

    static func bind(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Darwin)
        return Darwin.bind(descriptor, address, length)
        #elseif canImport(Musl)
        return Musl.bind(descriptor, address, length)
        #else
        return Glibc.bind(descriptor, address, length)
        #endif
    }

    static func shutdown(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.shutdown(descriptor, SHUT_RDWR)
        #elseif canImport(Musl)
        return Musl.shutdown(descriptor, SHUT_RDWR)
        #else
        return Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        #endif
    }
}
