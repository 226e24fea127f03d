/// A snapshot of what the stub has seen, for tests and benchmarks to assert on.
///
/// Counters answer the questions a refresh library is judged by: how many refreshes did N
/// concurrent requests cost, did a rotated token get replayed, were connections reused and
/// closed. All fields except `liveConnections` count since `start()` or the last
/// `SpotifyStub.resetCounters()`; `liveConnections` is a gauge of what is open right now.
public struct Counters: Sendable, Equatable {
    /// `authorization_code` grants that succeeded (tokens were issued).
    public var authorizationCodeGrants: Int
    /// `refresh_token` grants that succeeded (a new access token was issued).
    public var refreshTokenGrants: Int
    /// Every `POST /api/token` received, whatever its outcome: successes, errors and faults. It is
    /// counted when the request arrives, before any `tokenLatency`, so a test can see that a
    /// refresh is in flight. Requests the HTTP layer rejects before routing (400, 413, 431...)
    /// are not token requests and are not counted.
    public var tokenRequests: Int
    /// Answers to `/v1/...` requests, keyed by HTTP status code (200, 401, 404, 405).
    public var apiRequestsByStatus: [Int: Int]
    /// Times a refresh token that had already been rotated away was presented while
    /// `detectsRefreshTokenReuse` was on. The first such replay revokes the token family
    /// (RFC 9700 §4.14.2); later replays of the same family are still counted.
    public var reuseDetections: Int
    /// Client connections open right now. Not affected by `resetCounters()`.
    public var liveConnections: Int
    /// Token requests that were answered with an injected `Fault`.
    public var faultsInjected: Int
    /// Requests (token endpoint and Web API) answered 429 by the `rateLimit` knob.
    public var rateLimited: Int
    /// Refresh grants that presented a rotated-away refresh token within
    /// `refreshTokenReuseInterval` and were accepted (also counted in `refreshTokenGrants`).
    public var reuseIntervalRefreshes: Int

    /// Creates a snapshot; every field defaults to zero so a test can spell out only what it
    /// expects, e.g. `Counters(refreshTokenGrants: 1, tokenRequests: 1)`.
    public init(
        authorizationCodeGrants: Int = 0,
        refreshTokenGrants: Int = 0,
        tokenRequests: Int = 0,
        apiRequestsByStatus: [Int: Int] = [:],
        reuseDetections: Int = 0,
        liveConnections: Int = 0,
        faultsInjected: Int = 0,
        rateLimited: Int = 0,
        reuseIntervalRefreshes: Int = 0
    ) {
        self.authorizationCodeGrants = authorizationCodeGrants
        self.refreshTokenGrants = refreshTokenGrants
        self.tokenRequests = tokenRequests
        self.apiRequestsByStatus = apiRequestsByStatus
        self.reuseDetections = reuseDetections
        self.liveConnections = liveConnections
        self.faultsInjected = faultsInjected
        self.rateLimited = rateLimited
        self.reuseIntervalRefreshes = reuseIntervalRefreshes
    }
}
