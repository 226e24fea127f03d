import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for hostile-world tests: it records every request it gets
/// (headers and body) and answers as the test scripts it — a redirect elsewhere, a huge body, a
/// plain JSON answer. One thread per connection, one request per connection (`Connection: close`).
public final class LoopbackServer: @unchecked Sendable {
    /// A request as it arrived.
    public struct Request: Sendable {
        public let method: String
        public let path: String
        /// Header names lowercased.
        public let headers: [String: String]
        public let body: Data

        /// Everything the request carried, as text, to search for leaked secrets.
        public var everything: String {
            ([method, path] + headers.map { "\($0.key): \($0.value)" }).joined(separator: "\n") + "\n"
                + String(decoding: body, as: UTF8.self)
        }
    }

    /// How to answer.
    public enum Reply: Sendable {
        /// A complete answer.
        case answer(status: Int, headers: [String: String], body: Data)
        /// `bytes` bytes of filler, streamed, with a `Content-Length` announcing them.
        case huge(bytes: Int)
        /// `bytes` bytes of filler in chunks (`Transfer-Encoding: chunked`): no length up front.
        case hugeChunked(bytes: Int)
        /// A 200 announcing 1,000 bytes, then one byte every `interval` seconds.
        case drip(interval: TimeInterval)
        /// The head and half of a body whose `Content-Length` promises it all, then a close.
        case cutShort(status: Int, body: Data)
        /// The connection is reset without an answer.
        case reset
        /// No answer, ever (until the server stops).
        case hang
        /// A 200 whose `Content-Length` announces `bytes`, then nothing until the client closes.
        case announceThenHang(bytes: Int)
    }

    private let lock = NSLock()
    private var recorded: [Request] = []
    private var open: Set<Int32> = []
    private let respond: @Sendable (Request) -> Reply
    private let listener: Int32
    private var stopped = false

    /// The port it listens on.
    public let port: UInt16

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request received so far.
    public var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }

    /// A TCP socket listening on 127.0.0.1, on a port the system chose, and that port.
    public static func listeningSocket() throws -> (descriptor: Int32, port: UInt16) {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    /// Starts listening; `respond` answers each request, on the connection's thread.
    public init(respond: @escaping @Sendable (Request) -> Reply) throws {
        self.respond = respond
        (listener, port) = try Self.listeningSocket()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops listening.
    public func stop() {
        lock.lock()
        stopped = true
        let connections = open
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        // Hanging answers end with the server.
        for connection in connections { shutdown(connection, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                lock.lock()
                let done = stopped
                lock.unlock()
                if done || errno != EINTR { return }
                continue
            }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        lock.lock()
        open.insert(connection)
        lock.unlock()
        defer {
            lock.lock()
            open.remove(connection)
            lock.unlock()
            close(connection)
        }
        #if canImport(Darwin)
        // A client that hangs up mid-answer must not kill the test process with SIGPIPE.
        var noSignal: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard let request = read(from: connection) else { return }
        lock.lock()
        recorded.append(request)
        lock.unlock()
        switch respond(request) {
        case .answer(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) Scripted\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            transmit(Data((head + "\r\n").utf8) + body, to: connection)
        case .huge(let bytes):
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bytes)\r\nConnection: close\r\n\r\n"
            guard transmit(Data(head.utf8), to: connection) else { return }
            let chunk = Data(repeating: UInt8(ascii: " "), count: 64 * 1024)
            var sent = 0
            while sent < bytes {
                let part = chunk.prefix(min(chunk.count, bytes - sent))
                guard transmit(part, to: connection) else { return }
                sent += part.count
            }
        case .hugeChunked(let bytes):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            guard transmit(Data(head.utf8), to: connection) else { return }
            let chunk = Data("10000\r\n".utf8) + Data(repeating: UInt8(ascii: " "), count: 0x10000) + Data("\r\n".utf8)
            for _ in 0..<(bytes / 0x10000) {
                guard transmit(chunk, to: connection) else { return }
            }
            transmit(Data("0\r\n\r\n".utf8), to: connection)
        case .cutShort(let status, let body):
            let head =
                "HTTP/1.1 \(status) Cut\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            transmit(Data(head.utf8) + body.prefix(body.count / 2), to: connection)
        case .reset:
            // SO_LINGER with a zero timeout: close sends RST.
            var noLinger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &noLinger, socklen_t(MemoryLayout<linger>.size))
        case .hang:
            var byte: UInt8 = 0
            // Returns when the client gives up or the server stops.
            _ = recv(connection, &byte, 1, 0)
        case .announceThenHang(let bytes):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bytes)\r\n\r\n"
            guard transmit(Data(head.utf8), to: connection) else { return }
            var byte: UInt8 = 0
            _ = recv(connection, &byte, 1, 0)
        case .drip(let interval):
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            guard transmit(Data(head.utf8), to: connection) else { return }
            for _ in 0..<1000 {
                Thread.sleep(forTimeInterval: interval)
                guard transmit(Data(" ".utf8), to: connection) else { return }
            }
        }
    }

    /// The request head and its body (by `Content-Length`, or chunked: a body left unread when
    /// the connection closes makes the kernel reset it, and the client may then lose the answer).
    private func read(from connection: Int32) -> Request? {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[..<count])
            headEnd = buffer.range(of: Data("\r\n\r\n".utf8))
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let start = lines.first?.split(separator: " ") ?? []
        guard start.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = Data(buffer[headEnd.upperBound...])
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            // Up to the last, empty chunk (a request carries no trailers here).
            while Self.dechunked(body) == nil {
                let count = recv(connection, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body.append(contentsOf: chunk[..<count])
            }
            body = Self.dechunked(body) ?? body
        } else {
            let length = Int(headers["content-length"] ?? "") ?? 0
            while body.count < length {
                let count = recv(connection, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body.append(contentsOf: chunk[..<count])
            }
        }
        return Request(method: String(start[0]), path: String(start[1]), headers: headers, body: body)
    }

    /// The content of a complete chunked body, `nil` while its last chunk has not arrived.
    private static func dechunked(_ raw: Data) -> Data? {
        var content = Data()
        var rest = raw[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size >= 0 else { return nil }
            let start = lineEnd.upperBound
            if size == 0 { return rest[start...].starts(with: Data("\r\n".utf8)) ? content : nil }
            guard rest.distance(from: start, to: rest.endIndex) >= size + 2 else { return nil }
            let end = rest.index(start, offsetBy: size)
            content.append(rest[start..<end])
            rest = rest[rest.index(end, offsetBy: 2)...]
        }
        return nil
    }

    @discardableResult
    private func transmit(_ data: Data, to connection: Int32) -> Bool {
        Self.sendAll(data, to: connection)
    }

    /// Sends every byte of `bytes` on the socket `descriptor` (a send may take only part of them,
    /// or be interrupted). Returns `false` when the peer is gone, without a `SIGPIPE` on Linux.
    @discardableResult
    public static func sendAll(_ bytes: some ContiguousBytes, to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            #if canImport(Darwin)
            let flags: Int32 = 0
            #else
            let flags = Int32(MSG_NOSIGNAL)
            #endif
            var offset = 0
            while offset < buffer.count {
                let sent = send(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, flags)
                if sent > 0 {
                    offset += sent
                } else if !(sent < 0 && errno == EINTR) {
                    return false
                }
            }
            return true
        }
    }
}
