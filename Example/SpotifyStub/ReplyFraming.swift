/// How one request wants its answer sent: whether the connection stays open afterwards, whether
/// an HTTP/1.0 client must be told so, and whether the answer goes without its body.
struct ReplyFraming {
    /// The connection stays open after the answer.
    let keepAlive: Bool
    /// `Connection: keep-alive` is sent: HTTP/1.0 clients keep the connection only when told.
    let announceKeepAlive: Bool
    /// The answer to a `HEAD` request: its head alone, with the `Content-Length` the body would
    /// have (RFC 9110 §9.3.2). A body after it would be read as the start of the next answer.
    let omitsBody: Bool

    init(_ request: HTTPRequest) {
        keepAlive = request.wantsKeepAlive
        announceKeepAlive = keepAlive && request.minorVersion == 0
        omitsBody = request.method == "HEAD"
    }
}
