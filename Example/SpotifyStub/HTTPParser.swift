/// Turns the bytes received on a connection into requests, one at a time.
///
/// The parser is stateless: it is handed everything buffered so far and either finds one
/// complete request at the front, says more bytes are needed, or rejects the input. Re-scanning
/// the header section on each call is cheap at these sizes and leaves no half-parsed state to get
/// wrong when a request arrives in many small reads.
///
/// It is deliberately strict where leniency would hide client bugs or make framing ambiguous
/// (obsolete line folding, whitespace before the colon, conflicting `Content-Length`s,
/// `Transfer-Encoding`), and lenient where real clients differ harmlessly (bare LF line endings,
/// empty lines before the request line, absolute-form targets).
enum HTTPParser {
    /// Largest accepted request line plus header fields, in bytes. Larger gets 431.
    static let maximumHeaderBytes = 16 * 1024
    /// Largest accepted `Content-Length`. Larger gets 413 before any of the body is read.
    static let maximumBodyBytes = 1024 * 1024

    /// What the front of the buffer holds.
    enum Result {
        /// Not a whole request yet. `expectsContinue` is true once the header is complete and the
        /// client sent `Expect: 100-continue`, meaning it waits for an interim response before
        /// sending the body.
        case incomplete(expectsContinue: Bool)
        /// A whole request, occupying the buffer up to (not including) index `end`.
        case complete(HTTPRequest, end: Int)
        /// Bytes that can never become an acceptable request.
        case failure(HTTPParseError)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    /// Parses the request starting at `start` in `buffer`.
    static func parse(_ buffer: [UInt8], from start: Int) -> Result {
        let end = buffer.count
        // RFC 9112 §2.2: ignore empty lines before a request line (some clients send a stray
        // CRLF after a POST body).
        var head = start
        while head < end, buffer[head] == cr || buffer[head] == lf {
            head += 1
        }
        guard let headerEnd = endOfHeaderSection(buffer, from: head) else {
            return end - start > maximumHeaderBytes ? .failure(.headersTooLarge) : .incomplete(expectsContinue: false)
        }
        if headerEnd - start > maximumHeaderBytes {
            return .failure(.headersTooLarge)
        }
        let section: HeaderSection
        switch parseHeaderSection(buffer[head..<headerEnd]) {
        case .success(let parsed): section = parsed
        case .failure(let error): return .failure(error)
        }
        let bodyLength: Int
        switch contentLength(of: section.headers) {
        case .success(let length): bodyLength = length
        case .failure(let error): return .failure(error)
        }
        if end - headerEnd < bodyLength {
            let expect = section.headers.contains { $0.name == "expect" && $0.value.lowercased() == "100-continue" }
            return .incomplete(expectsContinue: expect && section.minorVersion >= 1)
        }
        let request = HTTPRequest(
            method: section.method,
            path: section.path,
            query: section.query,
            minorVersion: section.minorVersion,
            headers: section.headers,
            body: Array(buffer[headerEnd..<(headerEnd + bodyLength)])
        )
        return .complete(request, end: headerEnd + bodyLength)
    }

    // MARK: - Header section

    private struct HeaderSection {
        var method: String
        var path: String
        var query: String?
        var minorVersion: Int
        var headers: [(name: String, value: String)]
    }

    /// The index just past the empty line that ends the header section, or `nil` if it has not
    /// arrived yet. Accepts CRLF and bare LF line endings.
    private static func endOfHeaderSection(_ buffer: [UInt8], from start: Int) -> Int? {
        var index = start
        let limit = min(buffer.count, start + maximumHeaderBytes + 4)
        var lineStart = start
        while index < limit {
            if buffer[index] == lf {
                let lineLength = index - lineStart
                if lineLength == 0 || (lineLength == 1 && buffer[lineStart] == cr) {
                    return index + 1
                }
                lineStart = index + 1
            }
            index += 1
        }
        return nil
    }

    private static func parseHeaderSection(_ bytes: ArraySlice<UInt8>) -> Swift.Result<HeaderSection, HTTPParseError> {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        for index in bytes.indices where bytes[index] == lf {
            var line = bytes[lineStart..<index]
            if line.last == cr {
                line = line.dropLast()
            }
            lines.append(line)
            lineStart = index + 1
        }
        // The last line is the empty terminator.
        if lines.last?.isEmpty == true {
            lines.removeLast()
        }
        guard let requestLine = lines.first, !requestLine.isEmpty else {
            return .failure(.malformed("missing request line"))
        }
        for line in lines {
            // Control characters other than HTAB have no place in a header section; a stray CR
            // in particular is a classic smuggling vector.
            if line.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                return .failure(.malformed("control character in header section"))
            }
        }
        var section: HeaderSection
        switch parseRequestLine(requestLine) {
        case .success(let parsed): section = parsed
        case .failure(let error): return .failure(error)
        }
        for line in lines.dropFirst() {
            guard let first = line.first, first != 0x20, first != 0x09 else {
                return .failure(.malformed("obsolete line folding"))
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                return .failure(.malformed("header field without colon"))
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else {
                return .failure(.malformed("invalid header field name"))
            }
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingBlanks()
            section.headers.append((name: String(decoding: name, as: UTF8.self).lowercased(), value: value))
        }
        // RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host field.
        let hosts = section.headers.count { $0.name == "host" }
        if (section.minorVersion >= 1 && hosts != 1) || hosts > 1 {
            return .failure(.malformed(hosts == 0 ? "no Host header field" : "more than one Host header field"))
        }
        return .success(section)
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Swift.Result<HeaderSection, HTTPParseError> {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(.malformed("request line must be 'method target version'"))
        }
        let methodBytes = parts[0]
        let targetBytes = parts[1]
        let versionBytes = parts[2]
        guard !methodBytes.isEmpty, methodBytes.allSatisfy(isTokenCharacter) else {
            return .failure(.malformed("invalid method"))
        }
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.malformed("invalid request target"))
        }
        let version = String(decoding: versionBytes, as: UTF8.self)
        let minorVersion: Int
        switch version {
        case "HTTP/1.1": minorVersion = 1
        case "HTTP/1.0": minorVersion = 0
        default:
            let digits = "0123456789"
            let chars = Array(version)
            let looksLikeVersion =
                chars.count == 8 && version.hasPrefix("HTTP/") && chars[6] == "."
                && digits.contains(chars[5]) && digits.contains(chars[7])
            return .failure(looksLikeVersion ? .versionNotSupported : .malformed("invalid HTTP version"))
        }
        guard let (path, query) = splitTarget(String(decoding: targetBytes, as: UTF8.self)) else {
            return .failure(.malformed("unsupported request target form"))
        }
        return .success(
            HeaderSection(
                method: String(decoding: methodBytes, as: UTF8.self),
                path: path,
                query: query,
                minorVersion: minorVersion,
                headers: []
            )
        )
    }

    /// Splits origin-form (`/path?query`) and absolute-form (`http://host/path?query`) targets.
    /// The asterisk form is kept as the path `*`, which no route matches.
    private static func splitTarget(_ target: String) -> (path: String, query: String?)? {
        var rest = Substring(target)
        let lowered = target.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            rest = rest[rest.index(rest.startIndex, offsetBy: lowered.hasPrefix("http://") ? 7 : 8)...]
            if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                rest = rest[slash...]
            } else {
                rest = "/"
            }
            if rest.first == "?" {
                rest = "/" + rest
            }
        } else if target == "*" {
            return ("*", nil)
        } else if !target.hasPrefix("/") {
            return nil
        }
        // A fragment is never sent by conforming clients; drop it rather than misroute.
        if let hash = rest.firstIndex(of: "#") {
            rest = rest[..<hash]
        }
        if let mark = rest.firstIndex(of: "?") {
            return (String(rest[..<mark]), String(rest[rest.index(after: mark)...]))
        }
        return (String(rest), nil)
    }

    /// RFC 9110 `tchar`: the characters allowed in methods and header field names.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    // MARK: - Framing

    /// The body length the headers declare, or the framing error they contain.
    private static func contentLength(of headers: [(name: String, value: String)]) -> Swift.Result<Int, HTTPParseError>
    {
        if headers.contains(where: { $0.name == "transfer-encoding" }) {
            return .failure(.transferEncodingNotImplemented)
        }
        // Several Content-Length fields, or a list in one, are only acceptable if all agree
        // (RFC 9112 §6.3); anything else makes the body boundary ambiguous.
        let values = headers.filter { $0.name == "content-length" }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingBlanks() }
        guard let first = values.first else {
            return .success(0)
        }
        guard values.allSatisfy({ $0 == first }) else {
            return .failure(.malformed("conflicting Content-Length"))
        }
        guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .failure(.malformed("invalid Content-Length"))
        }
        var length = 0
        for digit in first.utf8 {
            length = length * 10 + Int(digit - UInt8(ascii: "0"))
            if length > maximumBodyBytes {
                return .failure(.bodyTooLarge)
            }
        }
        return .success(length)
    }
}
