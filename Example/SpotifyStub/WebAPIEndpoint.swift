import Foundation

/// `/v1/...`: a few Web API resources guarded by bearer tokens (RFC 6750).
///
/// The resources are static, but for one that takes a `PUT`: `/v1/playlists/{id}` changes a
/// playlist's details from a JSON body and answers with them, so that a client re-sending a body
/// after a 401 can be checked. What matters is the authorization check in front of them, which
/// answers exactly like Spotify's (`401` with `{"error":{"status":401,"message":...}}`) so that a
/// client's "refresh on 401, then retry" logic is exercised against the real shapes. With a rate
/// limit set, too many requests are answered `429` with `Retry-After`.
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
        let throttled = state.withLock { state -> Int? in
            guard let limit = state.rateLimit, !state.apiRate.admit(now: MonotonicClock.now(), limit: limit) else {
                return nil
            }
            state.counters.rateLimited += 1
            return limit.retryAfter
        }
        if let retryAfter = throttled {
            return WebAPIEndpoint.error(
                status: 429, message: "API rate limit exceeded",
                headers: [(name: "Retry-After", value: String(retryAfter))])
        }
        let isPlaylist = request.path.hasPrefix("/v1/playlists/") && request.path.count > "/v1/playlists/".count
        guard isPlaylist || WebAPIEndpoint.resources[request.path] != nil else {
            return WebAPIEndpoint.error(status: 404, message: "Service not found")
        }
        let allowed = isPlaylist ? "PUT" : "GET"
        guard request.method == allowed else {
            return WebAPIEndpoint.error(
                status: 405, message: "Method not allowed", headers: [(name: "Allow", value: allowed)])
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
            if isPlaylist { return changePlaylist(request) }
            return .json(status: 200, WebAPIEndpoint.resources[request.path] ?? .object([]))
        case .expired:
            return WebAPIEndpoint.error(status: 401, message: "The access token expired", headers: invalidToken)
        case .invalid:
            return WebAPIEndpoint.error(status: 401, message: "Invalid access token", headers: invalidToken)
        }
    }

    /// `PUT /v1/playlists/{id}`: a JSON object with a string `name`; answers with the playlist.
    private func changePlaylist(_ request: HTTPRequest) -> HTTPResponse {
        guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
            return WebAPIEndpoint.error(status: 400, message: "Content-Type must be application/json")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
            let name = object["name"] as? String
        else {
            return WebAPIEndpoint.error(status: 400, message: "Error parsing JSON: a string name is required")
        }
        let id = String(request.path.dropFirst("/v1/playlists/".count))
        return .json(status: 200, .object([("id", .string(id)), ("name", .string(name))]))
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
