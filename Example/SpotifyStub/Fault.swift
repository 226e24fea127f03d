/// A way for the token endpoint to misbehave, injected with `SpotifyStub.injectFaults(_:count:)`.
///
/// Each case models a failure a real client meets in the field, so that refresh logic can be shown
/// to survive it: an outage, throttling, a revoked grant, a broken proxy, a dropped connection or
/// a server that never answers. A fault replaces the whole answer to one `POST /api/token`; the
/// request is not processed, so no token is issued, rotated or revoked by it.
public enum Fault: Sendable, Equatable {
    /// `500 Internal Server Error` with a small JSON body: a transient server failure.
    case internalServerError
    /// `503 Service Unavailable` with a `Retry-After` header of `retryAfter` seconds: throttling or
    /// maintenance that tells the client when to come back.
    case serviceUnavailable(retryAfter: Int)
    /// `429 Too Many Requests` with a `Retry-After` header of `retryAfter` seconds and a JSON error:
    /// the client is being rate-limited.
    case rateLimited(retryAfter: Int)
    /// `400` with `{"error":"invalid_grant",...}` even for a valid grant: the user revoked access
    /// or the authorization server lost it, and the client must re-authenticate.
    case invalidGrant
    /// `200` with `Content-Type: application/json` and a body that is not JSON: a proxy or a
    /// half-deployed server that answers successfully with garbage.
    case malformedJSON
    /// A response whose `Content-Length` promises more bytes than are sent before the connection
    /// is closed: the connection drops in the middle of the body.
    case truncatedBody
    /// The connection is dropped after the request is read, with no response at all. It is
    /// reset (RST) rather than closed gracefully, as when a server process dies, so clients
    /// report a lost connection.
    case closeWithoutResponse
    /// The request is never answered. The connection stays open until the client gives up and
    /// closes it, or `SpotifyStub.stop()` is called.
    case hang
}
