/// `/v1/...`: a few read-only Web API resources guarded by bearer tokens (RFC 6750).
///
/// The resources are static; what matters is the authorization check in front of them, which
/// answers exactly like Spotify's (`401` with `{"error":{"status":401,"message":...}}`) so that a
/// client's "refresh on 401, then retry" logic is exercised against the real shapes.
struct WebAPIEndpoint {
    /// The state shared with the public API.
    let state: Protected<StubState>

    private static let resources: [String: JSONValue] = [
        "/v1/me": .object([
            ("id", .string("example-user")),
            ("display_name", .string("Example User")),
            ("country", .string("SE")),
            ("product", .string("premium")),
            ("type", .string("user")),
        ]),
        "/v1/me/player": .object([
            ("is_playing", .bool(true)),
            ("progress_ms", .int(42_000)),
            ("device", .object([("id", .string("example-device")), ("name", .string("Example Speaker"))])),
            ("item", .object([("id", .string("example-track")), ("name", .string("Example Track"))])),
        ]),
        "/v1/me/playlists": .object([
            (
                "items",
                .array([
                    .object([("id", .string("example-playlist-1")), ("name", .string("Focus"))]),
                    .object([("id", .string("example-playlist-2")), ("name", .string("Workout"))]),
                ])
            ),
            ("limit", .int(20)),
            ("offset", .int(0)),
            ("total", .int(2)),
        ]),
    ]

    /// Answers one `/v1/...` request and counts it by status.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let response = answer(request)
        state.withLock { state in
            state.counters.apiRequestsByStatus[response.status, default: 0] += 1
        }
        return response
    }

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard let resource = WebAPIEndpoint.resources[request.path] else {
            return WebAPIEndpoint.error(status: 404, message: "Service not found")
        }
        guard request.method == "GET" else {
            return WebAPIEndpoint.error(
                status: 405, message: "Method not allowed", headers: [(name: "Allow", value: "GET")])
        }
        let authorizations = request.values(of: "authorization")
        guard let authorization = authorizations.first else {
            // RFC 6750 §3.1: no error code when the request carried no credentials at all.
            return WebAPIEndpoint.error(
                status: 401,
                message: "No token provided",
                headers: [(name: "WWW-Authenticate", value: "Bearer realm=\"spotify\"")]
            )
        }
        let parts = authorization.split(separator: " ", maxSplits: 1).map { $0.trimmingBlanks() }
        let invalidToken = [(name: "WWW-Authenticate", value: "Bearer realm=\"spotify\", error=\"invalid_token\"")]
        guard authorizations.count == 1, parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            return WebAPIEndpoint.error(status: 401, message: "Invalid access token", headers: invalidToken)
        }
        let status = state.withLock { state in
            state.registry.status(ofAccessToken: parts[1], now: MonotonicClock.now())
        }
        switch status {
        case .valid:
            return .json(status: 200, resource)
        case .expired:
            return WebAPIEndpoint.error(status: 401, message: "The access token expired", headers: invalidToken)
        case .invalid:
            return WebAPIEndpoint.error(status: 401, message: "Invalid access token", headers: invalidToken)
        }
    }

    /// Spotify's Web API error shape: `{"error":{"status":...,"message":...}}`.
    static func error(status: Int, message: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        .json(
            status: status,
            .object([("error", .object([("status", .int(status)), ("message", .string(message))]))]),
            headers: headers
        )
    }
}
