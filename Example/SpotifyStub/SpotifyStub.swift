import Foundation

/// A small HTTP/1.1 server on 127.0.0.1 that plays Spotify's accounts service and a bit of its
/// Web API, so that OAuth token refresh can be exercised for real (URLSession, sockets, timing)
/// without a network, an account or rate limits.
///
/// It serves:
/// - `GET /authorize`: consent is granted at once; redirects back with a code.
/// - `POST /api/token`: the `authorization_code` and `refresh_token` grants, with client
///   authentication by HTTP Basic or by body parameters.
/// - `GET /v1/me`, `/v1/me/player`, `/v1/me/playlists`: small JSON resources that require a valid
///   bearer access token.
///
/// The knobs (token lifetime, rotation, reuse detection, latency, faults) may be changed at any
/// time from any thread; requests that arrive afterwards see the new values.
///
/// The stub never logs or prints anything, so no token or secret can leak from it.
///
/// ```swift
/// let stub = SpotifyStub()
/// try stub.start()
/// defer { stub.stop() }
/// stub.accessTokenLifetime = 0.3
/// stub.rotatesRefreshTokens = true
/// // point the client at stub.baseURL
/// ```
public final class SpotifyStub: Sendable {
    private let configuredPort: UInt16
    private let clients: [String: Client]
    private let state = Protected(StubState())
    private let lifecycle = Protected(Lifecycle())

    private struct Lifecycle {
        /// The control of the running loop, `nil` while stopped.
        var running: LoopControl?
        /// The port bound by the first successful `start()`; restarts reuse it.
        var boundPort: UInt16?
    }

    /// Creates a stopped stub.
    ///
    /// - Parameters:
    ///   - port: The port to listen on; 0 (the default) lets the system choose a free one, which
    ///     is what tests should use so that they can run in parallel.
    ///   - clients: The registered OAuth clients. If two share an id, the first one counts.
    public init(port: UInt16 = 0, clients: [Client] = [.example]) {
        configuredPort = port
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    deinit {
        stop()
    }

    // MARK: - Lifecycle

    /// Binds 127.0.0.1, listens, and serves on a background thread until `stop()`.
    ///
    /// `start()` after `stop()` restarts the stub on the same port it had (so `baseURL` stays
    /// valid across a simulated outage), keeping issued tokens, knobs, queued faults and counters.
    ///
    /// - Throws: `ServerError.alreadyRunning` if it is serving already, or
    ///   `ServerError.socket(...)` if the port cannot be bound (for example `EADDRINUSE` when
    ///   restarting and another process took the port meanwhile).
    public func start() throws {
        try lifecycle.withLock { lifecycle in
            guard lifecycle.running == nil else {
                throw ServerError.alreadyRunning
            }
            let (listener, port) = try Socket.listen(port: lifecycle.boundPort ?? configuredPort)
            let pipe: (read: Int32, write: Int32)
            do {
                pipe = try Socket.makeWakePipe()
            } catch {
                Socket.close(listener)
                throw error
            }
            let control = LoopControl(wakeReader: pipe.read, wakeWriter: pipe.write)
            let loop = EventLoop(
                listener: listener,
                control: control,
                router: Router(clients: clients, state: state),
                state: state
            )
            let thread = Thread {
                loop.run()
            }
            thread.name = "SpotifyStub"
            thread.start()
            lifecycle.running = control
            lifecycle.boundPort = port
        }
    }

    /// Stops serving: closes the listener and every connection, releasing requests that are
    /// hanging or waiting out `tokenLatency` (their clients see the connection close).
    ///
    /// Returns once everything is closed, so `counters.liveConnections` is 0 afterwards.
    /// Idempotent; also called when the stub is deallocated.
    public func stop() {
        lifecycle.withLock { lifecycle in
            guard let control = lifecycle.running else {
                return
            }
            control.requestStop()
            control.finished.wait()
            control.closePipe()
            lifecycle.running = nil
        }
    }

    /// The port being served: the one chosen by the system if `init` was given 0. Before the
    /// first `start()` it is the port passed to `init`.
    public var port: UInt16 {
        lifecycle.withLock { $0.boundPort ?? configuredPort }
    }

    /// `http://127.0.0.1:<port>`, the base for every route. Meaningful after `start()`.
    public var baseURL: URL {
        let string = "http://127.0.0.1:\(port)"
        guard let url = URL(string: string) else {
            preconditionFailure("\(string) is a valid URL")
        }
        return url
    }

    // MARK: - Knobs

    /// Seconds an access token is valid after it is issued: valid while
    /// `now < issuedAt + lifetime` on a monotonic clock. Default 3600. Fractions are allowed
    /// (`expires_in` is then sent as a JSON number with a fraction, e.g. `0.3`); negative values
    /// count as 0. Applies to tokens issued after the change.
    public var accessTokenLifetime: TimeInterval {
        get { state.withLock { $0.accessTokenLifetime } }
        set { state.withLock { $0.accessTokenLifetime = StubState.sanitizedDuration(newValue) } }
    }

    /// Seconds an authorization code can wait before it is exchanged. Default 600 (Spotify's ten
    /// minutes). Applies to codes issued after the change.
    public var authorizationCodeLifetime: TimeInterval {
        get { state.withLock { $0.authorizationCodeLifetime } }
        set { state.withLock { $0.authorizationCodeLifetime = StubState.sanitizedDuration(newValue) } }
    }

    /// Whether every refresh grant returns a new refresh token and invalidates the one presented.
    /// Default `false`, as Spotify does for confidential clients: the same refresh token keeps
    /// working and refresh responses carry no `refresh_token`.
    public var rotatesRefreshTokens: Bool {
        get { state.withLock { $0.rotatesRefreshTokens } }
        set { state.withLock { $0.rotatesRefreshTokens = newValue } }
    }

    /// Whether presenting a refresh token that was already rotated away revokes its whole family
    /// (every refresh and access token descended from the same authorization), as RFC 9700
    /// recommends. Default `true`. Only matters while rotation is on; with it off, a stale token
    /// is simply `invalid_grant`.
    public var detectsRefreshTokenReuse: Bool {
        get { state.withLock { $0.detectsRefreshTokenReuse } }
        set { state.withLock { $0.detectsRefreshTokenReuse = newValue } }
    }

    /// Seconds to wait before answering each `POST /api/token`, to widen the window in which
    /// concurrent requests pile up behind one refresh. Default 0. The request is counted when it
    /// arrives; it is processed (and tokens issued or rotated) when the delay is over, even if the
    /// client has given up by then, just as a real server finishes work whose answer is lost.
    /// Requests still waiting when the stub stops are dropped unprocessed.
    public var tokenLatency: TimeInterval {
        get { state.withLock { $0.tokenLatency } }
        set { state.withLock { $0.tokenLatency = StubState.sanitizedDuration(newValue) } }
    }

    /// Whether refresh tokens are single use, as Spotify's are for some clients: every refresh
    /// returns a new refresh token, and presenting one already used is refused with `invalid_grant`
    /// "Refresh token revoked" (and counted as a reuse). Default `false`.
    public var singleUseRefreshTokens: Bool {
        get { state.withLock { $0.singleUseRefreshTokens } }
        set { state.withLock { $0.singleUseRefreshTokens = newValue } }
    }

    /// Seconds during which a refresh token that a rotation just replaced is still accepted, as
    /// Auth0's "reuse interval" and Okta's "grace period" allow. Default 0 (strict rotation).
    /// Presenting it then is not a replay: it rotates again (the token the first rotation issued
    /// is replaced too) and is counted in `Counters.reuseIntervalRefreshes`. So a client killed
    /// after the server rotated, before it could save the new token, does not log everyone out.
    public var refreshTokenReuseInterval: TimeInterval {
        get { state.withLock { $0.refreshTokenReuseInterval } }
        set { state.withLock { $0.refreshTokenReuseInterval = StubState.sanitizedDuration(newValue) } }
    }

    /// Whether a token request is processed the moment it arrives, tokens issued and rotated
    /// before `tokenLatency` is waited out, rather than after it (the default, `false`). With it
    /// on, a client that gives up or dies while waiting for the answer has already spent its
    /// refresh token: rotation on receipt.
    public var processesTokenRequestsOnArrival: Bool {
        get { state.withLock { $0.processesTokenRequestsOnArrival } }
        set { state.withLock { $0.processesTokenRequestsOnArrival = newValue } }
    }

    /// Faults for token requests drawn at random (after any queued by `injectFaults`), or `nil`
    /// (the default) for none. Setting it restarts its generator from its seed.
    public var randomFaults: RandomFaults? {
        get { state.withLock { $0.randomFaults } }
        set { state.withLock { $0.randomFaults = newValue } }
    }

    /// How a wrong client id or secret is refused. Default ``InvalidClientAnswer/badRequest``:
    /// `400` with JSON `invalid_client`, as Spotify does.
    public var invalidClientAnswer: InvalidClientAnswer {
        get { state.withLock { $0.invalidClientAnswer } }
        set { state.withLock { $0.invalidClientAnswer = newValue } }
    }

    /// Throttling of the token endpoint and of the Web API (each counted on its own), answered
    /// `429` with `Retry-After`; `nil` (the default) for none.
    public var rateLimit: RateLimit? {
        get { state.withLock { $0.rateLimit } }
        set { state.withLock { $0.rateLimit = newValue } }
    }

    /// Makes the next `count` `POST /api/token` requests (any grant, in arrival order) fail with
    /// `fault` instead of being processed. Calls queue up: faults injected later apply after
    /// those already waiting. A `count` of 0 or less does nothing.
    public func injectFaults(_ fault: Fault, count: Int = 1) {
        state.withLock { $0.faults.append(fault, count: count) }
    }

    /// Expires every access token issued so far, so the next Web API call with any of them gets
    /// `401 "The access token expired"`. Refresh tokens keep working, and tokens issued later
    /// get the normal lifetime.
    public func expireAccessTokens() {
        state.withLock { $0.registry.expireAllAccessTokens(now: MonotonicClock.now()) }
    }

    // MARK: - Counters

    /// A consistent snapshot of the counters.
    public var counters: Counters {
        state.withLock { $0.counters }
    }

    /// Zeroes every counter except `liveConnections`, which counts what is open.
    public func resetCounters() {
        state.withLock { state in
            state.counters = Counters(liveConnections: state.counters.liveConnections)
        }
    }
}
