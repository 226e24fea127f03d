/// One parsed HTTP/1.x request, with its body fully read.
///
/// The parser has already enforced framing and size limits, so the endpoints can treat a request
/// as plain data. Header names are lower-cased because HTTP field names are case-insensitive and
/// clients differ in how they spell them.
struct HTTPRequest {
    /// The method token exactly as sent (`GET`, `POST`...). Methods are case-sensitive in HTTP.
    var method: String
    /// The path part of the request target, still percent-encoded, e.g. `/v1/me`.
    var path: String
    /// The query after `?`, still encoded, or `nil` when there was no `?`.
    var query: String?
    /// The minor version of HTTP/1.x: 0 or 1.
    var minorVersion: Int
    /// Header fields in arrival order, names lower-cased, values trimmed of surrounding blanks.
    var headers: [(name: String, value: String)]
    /// The request body (empty without `Content-Length`).
    var body: [UInt8]

    /// Every value sent for the header `name` (which must be lower-case), in order.
    func values(of name: String) -> [String] {
        headers.compactMap { $0.name == name ? $0.value : nil }
    }

    /// The value of the header `name` (lower-case) when it was sent exactly once.
    ///
    /// Headers the stub interprets (`Authorization`, `Content-Type`) are not list-valued, so two
    /// copies are treated as absent rather than guessing which one the client meant.
    func header(_ name: String) -> String? {
        let all = values(of: name)
        return all.count == 1 ? all[0] : nil
    }

    /// Whether the client asked to keep the connection open after this exchange: the default
    /// for HTTP/1.1 unless it sent `Connection: close`, and opt-in with `keep-alive` for HTTP/1.0.
    var wantsKeepAlive: Bool {
        let tokens = values(of: "connection")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingBlanks().lowercased() }
        if tokens.contains("close") {
            return false
        }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }
}
