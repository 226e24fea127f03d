import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Why a raw exchange failed.
public enum RawHTTPClientError: Error, Equatable {
    case socket(call: String, errno: Int32)
    /// Nothing (more) arrived within the receive timeout.
    case timedOut
    /// The server closed the connection before a whole response arrived.
    case closed
    case malformedResponse
}

/// A response read off a raw socket.
public struct RawHTTPResponse: Sendable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    public var text: String {
        String(decoding: body, as: UTF8.self)
    }

    public var json: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

/// A blocking TCP client for what URLSession cannot send: malformed requests, exact bytes,
/// pipelining, many simultaneous connections. Every read has a timeout so a test fails
/// instead of hanging.
public final class RawHTTPClient {
    public let descriptor: Int32
    private var buffered: [UInt8] = []
    private var isClosed = false

    /// Connects to 127.0.0.1:`port`; reads time out after `timeout` seconds.
    public init(port: UInt16, timeout: TimeInterval = 5) throws {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else {
            throw RawHTTPClientError.socket(call: "socket", errno: errno)
        }
        self.descriptor = descriptor
        var on: Int32 = 1
        #if canImport(Darwin)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var interval = timeval()
        interval.tv_sec = numericCast(Int(timeout))
        // check-apple: 32-bit safe (the fraction of a second, below 1,000,000 microseconds)
        interval.tv_usec = numericCast(Int((timeout - timeout.rounded(.down)) * 1_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            // A class initializer that throws after initializing every stored property still
            // runs deinit, which closes the socket; closing it here too would close whatever
            // another thread opened under the same number in between.
            close()
            throw RawHTTPClientError.socket(call: "connect", errno: code)
        }
    }

    deinit {
        close()
    }

    /// Sends `text` exactly as given (write `\r\n` yourself).
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends `bytes`, all of them.
    public func send(_ bytes: [UInt8]) throws {
        #if canImport(Darwin)
        let flags: Int32 = 0
        #else
        let flags = Int32(MSG_NOSIGNAL)
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { pointer in
                stubRawSend(descriptor, pointer.baseAddress.map { $0 + offset }, bytes.count - offset, flags)
            }
            if sent < 0 {
                if errno == EINTR {
                    continue
                }
                throw RawHTTPClientError.socket(call: "send", errno: errno)
            }
            offset += sent
        }
    }

    /// Reads one whole response (headers plus `Content-Length` body); bytes after it stay
    /// buffered for the next call, so pipelined responses can be read one by one.
    public func readResponse() throws -> RawHTTPResponse {
        while true {
            if let (response, consumed) = try parseBuffered(atEndOfFile: false) {
                buffered.removeFirst(consumed)
                return response
            }
            guard try receiveMore() else {
                if let (response, consumed) = try parseBuffered(atEndOfFile: true) {
                    buffered.removeFirst(consumed)
                    return response
                }
                throw RawHTTPClientError.closed
            }
        }
    }

    /// Reads until the server closes the connection; returns everything not yet consumed.
    public func readUntilClosed() throws -> [UInt8] {
        while try receiveMore() {}
        defer { buffered = [] }
        return buffered
    }

    /// Whether the server has closed the connection, waiting at most the receive timeout.
    /// Bytes that arrive meanwhile are kept.
    public func serverClosed() -> Bool {
        do {
            while try receiveMore() {}
            return true
        } catch {
            return false
        }
    }

    /// Closes the socket; idempotent.
    public func close() {
        if !isClosed {
            isClosed = true
            stubRawClose(descriptor)
        }
    }

    /// Reads once; false at end of file.
    private func receiveMore() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffered += chunk[0..<count]
                return true
            }
            if count == 0 {
                return false
            }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                throw RawHTTPClientError.timedOut
            case ECONNRESET:
                return false
            default:
                throw RawHTTPClientError.socket(call: "recv", errno: errno)
            }
        }
    }

    private func parseBuffered(atEndOfFile: Bool) throws -> (RawHTTPResponse, Int)? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard buffered.count >= 4,
            let headerEnd = (0...(buffered.count - 4)).first(where: { Array(buffered[$0..<($0 + 4)]) == separator })
        else {
            return nil
        }
        let head = String(decoding: buffered[0..<headerEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawHTTPClientError.malformedResponse
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw RawHTTPClientError.malformedResponse
            }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                .trimmingCharacters(in: .whitespaces)
        }
        let bodyStart = headerEnd + 4
        if status == 100 {
            return (RawHTTPResponse(status: status, headers: headers, body: []), bodyStart)
        }
        guard let length = headers["content-length"].flatMap({ Int($0) }) else {
            // Without a length the body runs to the end of the connection.
            guard atEndOfFile else {
                return nil
            }
            return (
                RawHTTPResponse(status: status, headers: headers, body: Array(buffered[bodyStart...])), buffered.count
            )
        }
        guard buffered.count - bodyStart >= length else {
            return nil
        }
        let body = Array(buffered[bodyStart..<(bodyStart + length)])
        return (RawHTTPResponse(status: status, headers: headers, body: body), bodyStart + length)
    }
}

// The raw client's own `send` and `close` shadow the C functions inside it.
private func stubRawClose(_ descriptor: Int32) {
    _ = close(descriptor)
}

private func stubRawSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(descriptor, bytes, count, flags)
}
