/// Where Spotify's behaviour varies, or differs from the RFCs, the stub can play either side.
extension SpotifyStub {
    /// Throttling: more than `requestsPerSecond` requests to one service (the token endpoint, or
    /// the Web API) within a second are answered `429 Too Many Requests` with `Retry-After:
    /// retryAfter`, as Spotify documents for its rate limits.
    public struct RateLimit: Sendable, Equatable {
        /// The most requests to one service answered normally within a second.
        public var requestsPerSecond: Int
        /// The `Retry-After` of a throttled answer, in seconds.
        public var retryAfter: Int

        /// Creates a limit.
        public init(requestsPerSecond: Int, retryAfter: Int) {
            self.requestsPerSecond = max(0, requestsPerSecond)
            self.retryAfter = max(0, retryAfter)
        }
    }

    /// Faults injected at random: each token request that no queued fault applies to gets, with
    /// `probability`, one of `faults` (picked uniformly). The draws come from a generator seeded
    /// with `seed`, so a run can be replayed (as far as the order of requests is the same).
    public struct RandomFaults: Sendable, Equatable {
        /// The chance, from 0 to 1, that a token request gets a fault.
        public var probability: Double
        /// The faults to pick from.
        public var faults: [Fault]
        /// The seed of the generator that draws them.
        public var seed: UInt64

        /// Creates a distribution; `probability` is clamped to 0...1.
        public init(probability: Double, faults: [Fault], seed: UInt64 = 1) {
            self.probability = probability.isFinite ? min(max(probability, 0), 1) : 0
            self.faults = faults
            self.seed = seed
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

/// A small seeded generator (SplitMix64), so that random faults can be replayed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
