import Foundation

/// `POST /api/token`: the OAuth 2.0 token endpoint (RFC 6749 §3.2) for the authorization-code
/// and refresh-token grants.
///
/// Order of checks: request syntax (`invalid_request`), then who is asking (`invalid_client`),
/// then what they ask for (`unsupported_grant_type`, `invalid_grant`). That way a client with a
/// wrong secret learns nothing about whether its code or token was any good.
struct TokenEndpoint {
    /// Registered clients by `client_id`.
    let clients: [String: SpotifyStub.Client]
    /// The state shared with the public API.
    let state: Protected<StubState>

    /// The realm of the Basic challenge sent with `invalid_client`.
    static let basicChallenge = "Basic realm=\"spotify\""

    /// Answers one request to `/api/token`, after the configured latency and through any injected
    /// fault.
    func handle(_ request: HTTPRequest) -> Reply {
        guard request.method == "POST" else {
            return .immediately(
                .respond(
                    TokenEndpoint.error(
                        status: 405,
                        "invalid_request",
                        "The token endpoint only accepts POST",
                        extraHeaders: [(name: "Allow", value: "POST")]
                    )
                )
            )
        }
        // Count and pick the fault on arrival so that tests see a refresh in flight and faults
        // apply to requests in the order they reached the server.
        let (fault, latency, throttled, onArrival) = state.withLock { state -> (Fault?, Double, Int?, Bool) in
            state.counters.tokenRequests += 1
            if let limit = state.rateLimit, !state.tokenRate.admit(now: MonotonicClock.now(), limit: limit) {
                state.counters.rateLimited += 1
                return (nil, 0, limit.retryAfter, false)
            }
            let fault = state.nextFault()
            if fault != nil {
                state.counters.faultsInjected += 1
            }
            return (fault, state.tokenLatency, nil, state.processesTokenRequestsOnArrival)
        }
        if let retryAfter = throttled {
            return .immediately(.respond(TokenEndpoint.tooManyRequests(retryAfter: retryAfter)))
        }
        if fault == .hang {
            return .immediately(.hang)
        }
        if onArrival, fault == nil, latency > 0 {
            let response = process(request)
            return .after(seconds: latency, produce: { .respond(response) })
        }
        let produce: () -> Outcome = {
            if let fault {
                return fault.outcome
            }
            return .respond(self.process(request))
        }
        return latency > 0 ? .after(seconds: latency, produce: produce) : .immediately(produce())
    }

    // MARK: - Grants

    private func process(_ request: HTTPRequest) -> HTTPResponse {
        let mediaType = request.header("content-type")?.split(separator: ";").first?.trimmingBlanks().lowercased()
        guard mediaType == "application/x-www-form-urlencoded" else {
            return TokenEndpoint.error(
                status: 400,
                "invalid_request",
                "Content-Type must be application/x-www-form-urlencoded"
            )
        }
        guard let pairs = FormURLEncoding.decode(String(decoding: request.body, as: UTF8.self)) else {
            return TokenEndpoint.error(status: 400, "invalid_request", "Malformed request body")
        }
        var parameters: [String: String] = [:]
        for pair in pairs {
            guard parameters[pair.name] == nil else {
                return TokenEndpoint.error(status: 400, "invalid_request", "Duplicate parameter: \(pair.name)")
            }
            parameters[pair.name] = pair.value
        }
        let client: SpotifyStub.Client
        let isPublicClient: Bool
        switch authenticateClient(request, parameters: parameters) {
        case .success(let authenticated):
            (client, isPublicClient) = authenticated
        case .failure(let failure):
            return failure.response
        }
        guard let grantType = parameters["grant_type"], !grantType.isEmpty else {
            return TokenEndpoint.error(status: 400, "invalid_request", "grant_type must be provided")
        }
        switch grantType {
        case "authorization_code":
            guard let code = parameters["code"], !code.isEmpty else {
                return TokenEndpoint.error(status: 400, "invalid_request", "code must be provided")
            }
            guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else {
                return TokenEndpoint.error(status: 400, "invalid_request", "redirect_uri must be provided")
            }
            return state.withLock { state in
                let result = state.registry.redeemCode(
                    code,
                    clientID: client.id,
                    redirectURI: redirectURI,
                    codeVerifier: parameters["code_verifier"],
                    isPublicClient: isPublicClient,
                    policy: state.policy,
                    now: MonotonicClock.now()
                )
                if case .success = result {
                    state.counters.authorizationCodeGrants += 1
                }
                return TokenEndpoint.response(for: result)
            }
        case "refresh_token":
            guard let refreshToken = parameters["refresh_token"], !refreshToken.isEmpty else {
                return TokenEndpoint.error(status: 400, "invalid_request", "refresh_token must be provided")
            }
            return state.withLock { state in
                let result = state.registry.refresh(
                    refreshToken,
                    clientID: client.id,
                    isPublicClient: isPublicClient,
                    policy: state.policy,
                    now: MonotonicClock.now()
                )
                switch result {
                case .success(let issued):
                    state.counters.refreshTokenGrants += 1
                    if issued.withinReuseInterval { state.counters.reuseIntervalRefreshes += 1 }
                case .failure(let error) where error.isReuse:
                    state.counters.reuseDetections += 1
                case .failure:
                    break
                }
                return TokenEndpoint.response(for: result)
            }
        default:
            return TokenEndpoint.error(
                status: 400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        }
    }

    private static func response(for result: Result<TokenRegistry.Issued, TokenRegistry.GrantError>) -> HTTPResponse {
        switch result {
        case .success(let issued):
            var members: [(String, JSONValue)] = [
                ("access_token", .string(issued.accessToken)),
                ("token_type", .string("Bearer")),
                ("scope", .string(issued.scope)),
                ("expires_in", .number(issued.lifetime)),
            ]
            if let refreshToken = issued.refreshToken {
                members.append(("refresh_token", .string(refreshToken)))
            }
            return .json(status: 200, .object(members), headers: noStore)
        case .failure(let error) where error.needsClientAuthentication:
            return TokenEndpoint.error(status: 400, "invalid_client", error.description)
        case .failure(let error):
            return TokenEndpoint.error(status: 400, "invalid_grant", error.description)
        }
    }

    /// `429` with `Retry-After`, as Spotify throttles.
    static func tooManyRequests(retryAfter: Int) -> HTTPResponse {
        error(
            status: 429, "temporarily_unavailable", "API rate limit exceeded",
            extraHeaders: [(name: "Retry-After", value: String(retryAfter))])
    }

    // MARK: - Client authentication

    private struct AuthenticationFailure: Error {
        var response: HTTPResponse
    }

    /// Authenticates with HTTP Basic (RFC 6749 §2.3.1, preferred) or with `client_id` and
    /// `client_secret` in the body; using both at once is refused, as the RFC requires. A body
    /// with `client_id` alone is a public client (PKCE, no secret): `isPublic` is then true, and
    /// the grant decides whether that is enough.
    private func authenticateClient(_ request: HTTPRequest, parameters: [String: String])
        -> Result<(client: SpotifyStub.Client, isPublic: Bool), AuthenticationFailure>
    {
        let authorizations = request.values(of: "authorization")
        let answer = state.withLock { $0.invalidClientAnswer }
        if !authorizations.isEmpty {
            // The client tried the Authorization header: the RFC answers a failure with 401 and a
            // challenge; Spotify with 400.
            func unauthorized(_ description: String) -> Result<
                (client: SpotifyStub.Client, isPublic: Bool), AuthenticationFailure
            > {
                guard answer == .basicChallenge else {
                    return .failure(
                        AuthenticationFailure(response: TokenEndpoint.error(status: 400, "invalid_client", description))
                    )
                }
                return .failure(
                    AuthenticationFailure(
                        response: TokenEndpoint.error(
                            status: 401,
                            "invalid_client",
                            description,
                            extraHeaders: [(name: "WWW-Authenticate", value: TokenEndpoint.basicChallenge)]
                        )
                    )
                )
            }
            guard authorizations.count == 1, let credentials = TokenEndpoint.basicCredentials(authorizations[0]) else {
                return unauthorized("Invalid client authentication")
            }
            if parameters["client_secret"] != nil {
                return .failure(
                    AuthenticationFailure(
                        response: TokenEndpoint.error(
                            status: 400,
                            "invalid_request",
                            "Use only one client authentication method"
                        )
                    )
                )
            }
            if let bodyID = parameters["client_id"], bodyID != credentials.id {
                return unauthorized("Invalid client")
            }
            guard let client = clients[credentials.id] else {
                return unauthorized("Invalid client")
            }
            guard client.secret == credentials.secret else {
                return unauthorized("Invalid client secret")
            }
            return .success((client, false))
        }
        // Body credentials: failures are 400, because a 401 must carry a challenge for a scheme the
        // client used (RFC 9110 §15.5.2), and this client used none.
        func badRequest(_ description: String) -> Result<
            (client: SpotifyStub.Client, isPublic: Bool), AuthenticationFailure
        > {
            .failure(AuthenticationFailure(response: TokenEndpoint.error(status: 400, "invalid_client", description)))
        }
        guard let clientID = parameters["client_id"], let client = clients[clientID] else {
            return badRequest("Invalid client")
        }
        guard let secret = parameters["client_secret"] else {
            return .success((client, true))
        }
        guard client.secret == secret else {
            return badRequest("Invalid client secret")
        }
        return .success((client, false))
    }

    /// The `(id, secret)` in `Basic base64(id:secret)`, each form-decoded as RFC 6749 §2.3.1
    /// has the client encode them, or `nil` if the header is anything else.
    private static func basicCredentials(_ header: String) -> (id: String, secret: String)? {
        let parts = header.split(separator: " ", maxSplits: 1).map { $0.trimmingBlanks() }
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: parts[1]),
            let decoded = String(data: data, encoding: .utf8),
            let colon = decoded.firstIndex(of: ":"),
            let id = FormURLEncoding.decodeComponent(decoded[..<colon]),
            let secret = FormURLEncoding.decodeComponent(decoded[decoded.index(after: colon)...])
        else {
            return nil
        }
        return (id, secret)
    }

    // MARK: - Responses

    /// Token responses and errors must never be cached (RFC 6749 §5.1).
    static let noStore: [(name: String, value: String)] = [
        (name: "Cache-Control", value: "no-store"),
        (name: "Pragma", value: "no-cache"),
    ]

    /// An RFC 6749 §5.2 error response.
    static func error(
        status: Int,
        _ code: String,
        _ description: String,
        extraHeaders: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        .json(
            status: status,
            .object([("error", .string(code)), ("error_description", .string(description))]),
            headers: noStore + extraHeaders
        )
    }
}
