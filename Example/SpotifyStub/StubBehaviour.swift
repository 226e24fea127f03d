/// Where Spotify's behaviour varies, or differs from the RFCs, the stub can play either side.
extension SpotifyStub {
    /// Throttling: more than `requestsPerSecond` requests to one service (the token endpoint, or
    /// the Web API) within a second are answered `429 Too Many Requests` with `Retry-After:
    /// retryAfter`, as Spotify documents for its rate limits.
    public struct RateLimit: Sendable, Equatable {
        public var requestsPerSecond: Int
        public var retryAfter: Int

        /// Creates a limit.
        public init(requestsPerSecond: Int, retryAfter: Int) {
            self.requestsPerSecond = max(0, requestsPerSecond)
            self.retryAfter = max(0, retryAfter)
        }
    }

    /// How the token endpoint refuses a client's credentials.
    public enum InvalidClientAnswer: Sendable, Equatable {
        /// `400` with `{"error":"invalid_client",…}`, as Spotify answers (the default).
        case badRequest
        /// `401` with `WWW-Authenticate: Basic` when the client used the header, as RFC 6749 §5.2
        /// asks.
        case basicChallenge
    }
}

/// Counts requests per one-second window, for a ``SpotifyStub/RateLimit``.
struct RateWindow {
    private var start: Double = 0
    private var count = 0

    /// Counts a request at `now`; whether it is within `limit`.
    mutating func admit(now: Double, limit: SpotifyStub.RateLimit) -> Bool {
        if now - start >= 1 {
            start = now
            count = 0
        }
        count += 1
        return count <= limit.requestsPerSecond
    }
}
