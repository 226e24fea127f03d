/// A response to be written to a connection.
///
/// Endpoints build these as values; the connection decides the connection-management headers
/// (`Content-Length`, `Connection`) at serialization time, because only it knows whether the
/// connection will stay open.
struct HTTPResponse {
    /// The status code.
    var status: Int
    /// Header fields other than `Content-Length`, `Connection`, `Date` and `Server`.
    var headers: [(name: String, value: String)]
    /// The body bytes.
    var body: [UInt8]

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response. `Cache-Control: no-store` is added wherever tokens or token errors may
    /// appear, so callers pass it in `headers`.
    static func json(status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [(name: "Content-Type", value: "application/json; charset=utf-8")] + headers,
            body: Array(value.serialized.utf8)
        )
    }

    /// A plain-text response, used where Spotify answers with a human-readable page.
    static func text(status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [(name: "Content-Type", value: "text/plain; charset=utf-8")] + headers,
            body: Array((text + "\n").utf8)
        )
    }

    /// The bytes on the wire.
    ///
    /// - Parameters:
    ///   - closing: Whether the connection closes after this response (`Connection: close`).
    ///   - announceKeepAlive: Whether to send `Connection: keep-alive`, which HTTP/1.0 clients
    ///     need to hear to keep the connection.
    ///   - sentBodyBytes: How many body bytes to actually include; fewer than `body.count`
    ///     produces a truncated response whose `Content-Length` still promises the whole body.
    func serialized(closing: Bool, announceKeepAlive: Bool, sentBodyBytes: Int? = nil) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(for: status))\r\n"
        head += "Date: \(HTTPDate.now())\r\n"
        head += "Server: SpotifyStub\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        if status >= 200 && status != 204 && status != 304 {
            head += "Content-Length: \(body.count)\r\n"
        }
        if closing {
            head += "Connection: close\r\n"
        } else if announceKeepAlive {
            head += "Connection: keep-alive\r\n"
        }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let sent = sentBodyBytes {
            bytes += body.prefix(max(0, sent))
        } else {
            bytes += body
        }
        return bytes
    }

    /// The interim response that tells an `Expect: 100-continue` client to send its body.
    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// The standard reason phrase; clients ignore it, humans reading a capture do not.
    static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 204: return "No Content"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}
