/// Everything the stub's request handling shares with its public API: the knobs, the issued
/// tokens, the queued faults and the counters.
///
/// It lives in one `Protected` box so that a knob turned by a test and a request being answered
/// on the event loop see one consistent state, and so that a counters snapshot is taken
/// atomically.
struct StubState {
    /// Seconds an access token stays valid once issued. Never negative or NaN.
    var accessTokenLifetime: Double = 3600
    /// Seconds an authorization code may wait before being exchanged.
    var authorizationCodeLifetime: Double = 600
    /// Whether each refresh grant replaces the refresh token.
    var rotatesRefreshTokens = false
    /// Whether replaying a rotated-away refresh token revokes its family.
    var detectsRefreshTokenReuse = true
    /// Seconds to wait before answering a token request.
    var tokenLatency: Double = 0
    /// Whether refresh tokens are single use: rotated on every refresh, a reused one refused with
    /// "Refresh token revoked".
    var singleUseRefreshTokens = false
    /// Seconds a rotated-away refresh token is still accepted.
    var refreshTokenReuseInterval: Double = 0
    /// Whether a token request is processed when it arrives (and only its answer waits out
    /// `tokenLatency`) rather than after the latency.
    var processesTokenRequestsOnArrival = false
    /// Faults drawn at random for token requests no queued fault applies to.
    var randomFaults: SpotifyStub.RandomFaults? {
        didSet { random = SplitMix64(seed: randomFaults?.seed ?? 0) }
    }
    var random = SplitMix64(seed: 0)
    /// How bad client credentials are answered.
    var invalidClientAnswer = SpotifyStub.InvalidClientAnswer.badRequest
    /// Throttling of the token endpoint and the Web API, each counted on its own.
    var rateLimit: SpotifyStub.RateLimit?
    var tokenRate = RateWindow()
    var apiRate = RateWindow()
    var faults = FaultQueue()
    var registry = TokenRegistry()
    var counters = Counters()

    /// The registry policy implied by the current knobs.
    var policy: TokenRegistry.Policy {
        TokenRegistry.Policy(
            accessTokenLifetime: accessTokenLifetime,
            rotatesRefreshTokens: rotatesRefreshTokens || singleUseRefreshTokens,
            detectsRefreshTokenReuse: detectsRefreshTokenReuse,
            singleUseRefreshTokens: singleUseRefreshTokens,
            reuseInterval: refreshTokenReuseInterval
        )
    }

    /// The fault for the next token request: a queued one, else one drawn from `randomFaults`.
    mutating func nextFault() -> Fault? {
        if let queued = faults.next() { return queued }
        guard let randomFaults, !randomFaults.faults.isEmpty,
            random.nextUnit() < randomFaults.probability
        else { return nil }
        return randomFaults.faults[Int(random.next() % UInt64(randomFaults.faults.count))]
    }

    /// Brings a durations set through the public API into the range the stub can honour: no
    /// negative or NaN durations, and nothing so large that `now + duration` stops being a
    /// meaningful deadline or `expires_in` stops being a JSON number.
    static func sanitizedDuration(_ seconds: Double) -> Double {
        guard seconds.isFinite else {
            return seconds.isNaN ? 0 : maximumDuration
        }
        return min(max(seconds, 0), maximumDuration)
    }

    /// Ten years: "forever" for any test or benchmark.
    static let maximumDuration: Double = 10 * 365 * 24 * 3600
}
