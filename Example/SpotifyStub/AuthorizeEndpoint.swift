/// `GET /authorize`: the consent screen, with consent granted automatically.
///
/// The error handling follows RFC 6749 §4.1.2.1 the way Spotify does: while the client or the
/// redirect URI is in doubt the user must not be sent anywhere (an open redirector would let
/// anyone bounce users to a phishing page), so those errors are a plain 400 page. Once both are
/// known good, every other error is reported to the client by redirecting with `error=`.
struct AuthorizeEndpoint {
    /// Registered clients by `client_id`.
    let clients: [String: SpotifyStub.Client]
    /// The state shared with the public API.
    let state: Protected<StubState>

    /// Answers one request to `/authorize`.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" else {
            return .text(status: 405, "Method not allowed", headers: [(name: "Allow", value: "GET")])
        }
        guard let parameters = FormURLEncoding.decode(request.query ?? "") else {
            return .text(status: 400, "INVALID_REQUEST: Malformed query string")
        }
        func values(_ name: String) -> [String] {
            parameters.compactMap { $0.name == name ? $0.value : nil }
        }
        let clientIDs = values("client_id")
        guard clientIDs.count == 1, let client = clients[clientIDs[0]] else {
            return .text(status: 400, "INVALID_CLIENT: Invalid client")
        }
        let redirectURIs = values("redirect_uri")
        guard redirectURIs.count == 1, client.accepts(redirectURI: redirectURIs[0]) else {
            return .text(status: 400, "INVALID_CLIENT: Invalid redirect URI")
        }
        let redirectURI = redirectURIs[0]
        let states = values("state")
        let clientState = states.first
        let responseTypes = values("response_type")
        let scopes = values("scope")
        if states.count > 1 || responseTypes.count > 1 || scopes.count > 1 {
            return redirect(to: redirectURI, with: [("error", "invalid_request")], state: clientState)
        }
        guard responseTypes.first == "code" else {
            return redirect(to: redirectURI, with: [("error", "unsupported_response_type")], state: clientState)
        }
        // PKCE: like Spotify, only S256 (RFC 7636 §4.3); a request without a challenge is the
        // flow with a client secret.
        let challenges = values("code_challenge")
        let methods = values("code_challenge_method")
        if challenges.count > 1 || methods.count > 1 || (challenges.isEmpty && !methods.isEmpty) {
            return redirect(to: redirectURI, with: [("error", "invalid_request")], state: clientState)
        }
        if let challenge = challenges.first, methods.first != "S256" || challenge.count != 43 {
            return redirect(
                to: redirectURI,
                with: [("error", "invalid_request"), ("error_description", "code_challenge_method must be S256")],
                state: clientState)
        }
        let scope = scopes.first ?? ""
        let code = state.withLock { state in
            state.registry.issueCode(
                clientID: client.id,
                redirectURI: redirectURI,
                scope: scope,
                codeChallenge: challenges.first,
                lifetime: state.authorizationCodeLifetime,
                now: MonotonicClock.now()
            )
        }
        return redirect(to: redirectURI, with: [("code", code)], state: clientState)
    }

    /// A 302 back to the client, with `parameters` and the echoed `state` added to the redirect
    /// URI's query (keeping any query it already has and any fragment after it).
    private func redirect(to redirectURI: String, with parameters: [(String, String)], state: String?) -> HTTPResponse {
        var all = parameters
        if let state {
            all.append(("state", state))
        }
        let query = all.map { "\(FormURLEncoding.encodeComponent($0.0))=\(FormURLEncoding.encodeComponent($0.1))" }
            .joined(separator: "&")
        var base = Substring(redirectURI)
        var fragment: Substring = ""
        if let hash = base.firstIndex(of: "#") {
            fragment = base[hash...]
            base = base[..<hash]
        }
        let separator = base.contains("?") ? "&" : "?"
        return HTTPResponse(
            status: 302,
            headers: [
                (name: "Location", value: "\(base)\(separator)\(query)\(fragment)"),
                (name: "Cache-Control", value: "no-store"),
            ]
        )
    }
}
