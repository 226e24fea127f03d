/// Why bytes on a connection are not an acceptable request.
///
/// Every case ends the connection after the error response: once framing is in doubt the stub
/// cannot know where the next request would start, and guessing is how request smuggling begins.
enum HTTPParseError: Error, Equatable {
    /// Syntax the stub does not accept: a broken request line, header or `Content-Length`.
    case malformed(String)
    /// The request line and headers exceed `HTTPParser.maximumHeaderBytes`.
    case headersTooLarge
    /// `Content-Length` exceeds `HTTPParser.maximumBodyBytes`.
    case bodyTooLarge
    /// A `Transfer-Encoding` (such as `chunked`) was used; the stub only reads `Content-Length`
    /// bodies, which is all URLSession and curl send for a form post.
    case transferEncodingNotImplemented
    /// An HTTP version other than 1.0 and 1.1.
    case versionNotSupported

    /// The status code that reports this error to the client.
    var status: Int {
        switch self {
        case .malformed: return 400
        case .headersTooLarge: return 431
        case .bodyTooLarge: return 413
        case .transferEncodingNotImplemented: return 501
        case .versionNotSupported: return 505
        }
    }

    /// A short plain-text explanation for the response body.
    var message: String {
        switch self {
        case .malformed(let reason): return "Bad request: \(reason)"
        case .headersTooLarge: return "Request header fields too large"
        case .bodyTooLarge: return "Request body too large"
        case .transferEncodingNotImplemented: return "Transfer-Encoding is not supported; send Content-Length"
        case .versionNotSupported: return "HTTP version not supported"
        }
    }
}
