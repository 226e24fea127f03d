/// Reads RESP2 replies from bytes as they arrive, within fixed bounds.
///
/// Feed it what the socket returned with ``append(_:)``, then call ``next()`` until it returns
/// `nil` (the reply is not complete yet). Nothing a server sends can make it use more than
/// ``maximumReplySize`` bytes of buffer, nest deeper than ``maximumDepth``, or crash: anything
/// that is not RESP2 is a ``RedisError/protocolViolation(_:)``, anything larger a
/// ``RedisError/replyTooLarge(limit:)``.
struct RESPParser {
    /// The largest reply, in bytes on the wire, that is read.
    let maximumReplySize: Int
    /// How deeply arrays may nest.
    let maximumDepth = 8
    /// The longest header line (`$`, `*`, `:`, `+`, `-` lines), in bytes.
    private static let maximumLineLength = 64 * 1024

    private static let typeBytes: [UInt8] = Array("+-:$*".utf8)

    private var buffer: [UInt8] = []
    private var start = 0

    init(maximumReplySize: Int) {
        self.maximumReplySize = Self.bound(maximumReplySize)
    }

    /// The bound a parser made with `maximumReplySize` keeps: never below 64 bytes, so that
    /// short replies (`+OK`, an error line) always fit.
    static func bound(_ maximumReplySize: Int) -> Int {
        max(64, maximumReplySize)
    }

    /// Whether a value of `count` bytes, read back as a bulk string (`$`, its length, a line end,
    /// the bytes, a line end), fits a parser made with `maximumReplySize`.
    static func bulkString(ofLength count: Int, fits maximumReplySize: Int) -> Bool {
        let framing = 1 + String(count).utf8.count + 2 + 2
        return count <= bound(maximumReplySize) - framing
    }

    /// Bytes received and not yet parsed.
    var pendingByteCount: Int { buffer.count - start }

    /// Adds bytes received from the server.
    ///
    /// - Throws: ``RedisError/replyTooLarge(limit:)`` when the unparsed bytes would exceed the
    ///   bound: the reply cannot be complete within it.
    mutating func append(_ bytes: some Collection<UInt8>) throws(RedisError) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        guard buffer.count - start + bytes.count <= maximumReplySize else {
            throw .replyTooLarge(limit: maximumReplySize)
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or `nil` when more bytes are needed.
    mutating func next() throws(RedisError) -> RESPValue? {
        var cursor = start
        guard let value = try parse(at: &cursor, depth: 0) else { return nil }
        start = cursor
        if start == buffer.count {
            // Every byte received is parsed: keep none of a reply (a stored value, its tokens)
            // longer than needed.
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return value
    }

    private func parse(at cursor: inout Int, depth: Int) throws(RedisError) -> RESPValue? {
        guard depth <= maximumDepth else { throw .protocolViolation("replies nested more than \(maximumDepth) deep") }
        guard cursor < buffer.count else { return nil }
        let type = buffer[cursor]
        guard Self.typeBytes.contains(type) else {
            throw .protocolViolation("a reply that does not start with a RESP type byte")
        }
        guard let line = try line(at: cursor + 1) else { return nil }
        let text = line.text
        switch type {
        case UInt8(ascii: "+"):
            cursor = line.end
            return .simpleString(text)
        case UInt8(ascii: "-"):
            cursor = line.end
            return .error(text)
        case UInt8(ascii: ":"):
            guard let value = Int64(text) else { throw .protocolViolation("an integer reply that is not a number") }
            cursor = line.end
            return .integer(value)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1 else {
                throw .protocolViolation("a bulk string length that is not a number")
            }
            if length == -1 {
                cursor = line.end
                return .null
            }
            guard length <= maximumReplySize else { throw .replyTooLarge(limit: maximumReplySize) }
            // Compared as what is left of the buffer: `line.end + length` overflows when the
            // bound is near the largest integer.
            let available = buffer.count - line.end
            guard length <= available, available - length >= 2 else { return nil }
            let end = line.end + length
            guard buffer[end] == UInt8(ascii: "\r"), buffer[end + 1] == UInt8(ascii: "\n") else {
                throw .protocolViolation("a bulk string longer than its length")
            }
            cursor = end + 2
            return .bulkString(Array(buffer[line.end..<end]))
        case UInt8(ascii: "*"):
            guard let count = Int(text), count >= -1 else {
                throw .protocolViolation("an array length that is not a number")
            }
            if count == -1 {
                cursor = line.end
                return .null
            }
            // Every element takes at least three bytes (`:0` and CRLF is four, `+` CRLF three).
            guard count <= maximumReplySize / 3 else { throw .replyTooLarge(limit: maximumReplySize) }
            var elements: [RESPValue] = []
            var position = line.end
            for _ in 0..<count {
                guard let element = try parse(at: &position, depth: depth + 1) else { return nil }
                elements.append(element)
            }
            cursor = position
            return .array(elements)
        default:
            throw .protocolViolation("a reply that does not start with a RESP type byte")
        }
    }

    /// The text of the line starting at `index` and the index after its CRLF; `nil` when the
    /// line is not complete yet.
    private func line(at index: Int) throws(RedisError) -> (text: String, end: Int)? {
        var position = index
        while position < buffer.count {
            if buffer[position] == UInt8(ascii: "\r") {
                guard position + 1 < buffer.count else { return nil }
                guard buffer[position + 1] == UInt8(ascii: "\n") else {
                    throw .protocolViolation("a carriage return without a line feed")
                }
                return (String(decoding: buffer[index..<position], as: UTF8.self), position + 2)
            }
            if buffer[position] == UInt8(ascii: "\n") {
                throw .protocolViolation("a line feed without a carriage return")
            }
            position += 1
            if position - index > Self.maximumLineLength { throw .protocolViolation("a header line too long") }
        }
        return nil
    }
}
