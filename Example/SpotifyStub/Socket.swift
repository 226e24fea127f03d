#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the BSD socket calls the event loop needs, hiding the differences between
/// Glibc and Darwin (constant types, `MSG_NOSIGNAL` versus `SO_NOSIGPIPE`).
///
/// Every descriptor is non-blocking and close-on-exec. SIGPIPE is suppressed per socket rather
/// than by changing the process's signal disposition, which belongs to the host program.
enum Socket {
    /// The result of a non-blocking read or write.
    enum IOResult: Equatable {
        /// This many bytes were transferred (more than zero).
        case transferred(Int)
        /// The peer closed its side (reads only).
        case endOfFile
        /// Nothing can be transferred until poll says so.
        case wouldBlock
        /// The connection is broken; `errno` says why.
        case failed(Int32)
    }

    /// Creates a listening TCP socket on 127.0.0.1:`port` (0 lets the kernel pick) and returns it
    /// with the port actually bound.
    static func listen(port: UInt16) throws(SpotifyStub.ServerError) -> (descriptor: Int32, port: UInt16) {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else {
            throw .socket(call: "socket", errno: errno)
        }
        /// Closes the half-made listener, keeping the errno of the call that failed.
        func failure(_ call: String) -> SpotifyStub.ServerError {
            let code = errno
            close(descriptor)
            return .socket(call: call, errno: code)
        }
        // Lets a restarted stub (or the next test) rebind a port whose old connections are still
        // in TIME_WAIT.
        var on: Int32 = 1
        guard setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw failure("setsockopt")
        }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            throw failure("bind")
        }
        // The kernel caps the backlog at somaxconn; ask for plenty so that a burst of a thousand
        // connects is not dropped into SYN retransmission (which costs a second each).
        guard systemListen(descriptor, 4096) == 0 else {
            throw failure("listen")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getsockname(descriptor, $0, &length)
            }
        }
        guard named == 0 else {
            throw failure("getsockname")
        }
        guard makeNonBlocking(descriptor) else {
            throw failure("fcntl")
        }
        return (descriptor, UInt16(bigEndian: actual.sin_port))
    }

    /// The result of accepting on a listening socket.
    enum AcceptResult {
        /// A new connection, already non-blocking.
        case accepted(Int32)
        /// No pending connection.
        case wouldBlock
        /// Out of descriptors or memory: stop accepting for a moment instead of spinning.
        case exhausted
        /// A connection that died in the queue, or an interrupted call: just try again.
        case retry
    }

    /// Accepts one pending connection.
    static func accept(listener: Int32) -> AcceptResult {
        let descriptor = systemAccept(listener, nil, nil)
        guard descriptor >= 0 else {
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                return .wouldBlock
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                return .exhausted
            default:
                // EINTR, ECONNABORTED, EPROTO and friends concern only that one connection.
                return .retry
            }
        }
        guard makeNonBlocking(descriptor) else {
            close(descriptor)
            return .retry
        }
        var on: Int32 = 1
        // Responses are written whole; Nagle would only add delayed-ACK stalls on keep-alive.
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return .accepted(descriptor)
    }

    /// Reads up to `count` bytes into `buffer`.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let result = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if result > 0 {
                return .transferred(result)
            }
            if result == 0 {
                return .endOfFile
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    /// Writes as much of `bytes` as the socket takes without blocking.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> IOResult {
        #if canImport(Darwin)
        let flags: Int32 = 0
        #else
        let flags = Int32(MSG_NOSIGNAL)
        #endif
        while true {
            let result = send(descriptor, bytes.baseAddress, bytes.count, flags)
            if result >= 0 {
                return result == 0 ? .wouldBlock : .transferred(result)
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(errno)
            }
        }
    }

    /// Sends FIN so the client sees the end of the response, while still letting its remaining
    /// bytes be read (see `Connection` on lingering close).
    static func shutdownWrite(_ descriptor: Int32) {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Arranges for the coming `close` to send RST instead of FIN (SO_LINGER with a zero timeout),
    /// discarding anything unsent: the connection drops as if the server crashed.
    static func reset(_ descriptor: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Closes a descriptor, ignoring errors: there is nothing useful to do about them.
    static func close(_ descriptor: Int32) {
        _ = systemClose(descriptor)
    }

    /// Creates the pipe used to wake the event loop from another thread.
    static func makeWakePipe() throws(SpotifyStub.ServerError) -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw .socket(call: "pipe", errno: errno)
        }
        guard makeNonBlocking(descriptors[0]), makeNonBlocking(descriptors[1]) else {
            let code = errno
            close(descriptors[0])
            close(descriptors[1])
            throw .socket(call: "fcntl", errno: code)
        }
        return (descriptors[0], descriptors[1])
    }

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC`.
    private static func makeNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL, 0)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            return false
        }
        let descriptorFlags = fcntl(descriptor, F_GETFD, 0)
        return descriptorFlags >= 0 && fcntl(descriptor, F_SETFD, descriptorFlags | FD_CLOEXEC) == 0
    }
}

// The enum's own `listen`, `accept` and `close` shadow the C functions inside it; these aliases
// reach the C ones without spelling the module name on each platform.
private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 {
    listen(descriptor, backlog)
}

private func systemAccept(
    _ descriptor: Int32,
    _ address: UnsafeMutablePointer<sockaddr>?,
    _ length: UnsafeMutablePointer<socklen_t>?
) -> Int32 {
    accept(descriptor, address, length)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
