import Dispatch
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client of an OAuth 2.0 token endpoint: the `refresh_token` and `authorization_code` grants.
///
/// ```swift
/// let client = TokenEndpointClient(
///     tokenURL: URL(string: "https://accounts.spotify.com/api/token")!,
///     clientID: "your-client-id", clientSecret: "your-client-secret")
/// let token = try await client.exchange(code: code, redirectURI: redirectURI, codeVerifier: verifier)
/// let fresh = try await client.refresh(token)
/// ```
///
/// Requests are form-encoded `POST`s with the client authenticated as ``clientAuthentication``
/// says. A successful answer must carry `access_token` and `token_type`; a new `refresh_token`
/// replaces the old one and a missing one keeps it (RFC 6749 §6). Answers larger than 1 MiB are
/// refused. Every request ends within ``requestTimeout``, however slowly the server answers.
/// A `tokenURL` that is not https (plain http only to this machine: `localhost`, 127.0.0.0/8,
/// `::1`, and not through a proxy on another machine that the environment names, as `http_proxy`
/// does on Linux; unless ``allowsPlainHTTP``) fails every grant with
/// ``OAuth2Error/insecureEndpoint(host:)`` before anything is sent.
/// Errors are ``OAuth2Error``s (or `CancellationError` when the calling task is cancelled).
/// Printing the client never shows its secret.
public struct TokenEndpointClient: Sendable {
    /// The token endpoint.
    public var tokenURL: URL
    /// The client identifier. It must hold more than white space (see
    /// <doc:Errors#Invalid-configuration>).
    public var clientID: String {
        didSet { requireText(clientID, "TokenEndpointClient.clientID") }
    }
    /// The client secret, or `nil` for a public client.
    public var clientSecret: String?
    /// How the client authenticates itself. Reads `.none` while it is `.basic` and there is no
    /// ``clientSecret``: a secret given later is sent with Basic again.
    public var clientAuthentication: ClientAuthenticationMethod {
        get { chosenAuthentication == .basic && clientSecret == nil ? .none : chosenAuthentication }
        set { chosenAuthentication = newValue }
    }
    /// The method as it was chosen, whether or not there is a secret now.
    private var chosenAuthentication: ClientAuthenticationMethod
    /// Extra form parameters sent with every grant (an `audience` or `resource`, say).
    public var additionalParameters: [String: String]
    /// Extra headers sent with every request.
    public var additionalHeaders: [String: String]
    /// The session whose configuration carries the requests (timeouts, proxies, TLS settings).
    ///
    /// The requests go through a session of the client's own made from this one's configuration,
    /// so that whatever this session does, they never follow a redirect (which would carry the
    /// client secret and refresh token to another address), never buffer more than the 1 MiB a
    /// token response may take, and never hang on a refused client secret (on Linux, whose
    /// URLSession would wait for a password forever, HTTP authentication challenges are refused;
    /// on Apple platforms the system answers them, with the credentials it keeps for an
    /// authenticating proxy). Server-trust challenges still go to this session's delegate, to its
    /// session-level `urlSession(_:didReceive:completionHandler:)`, so certificate pinning done
    /// there applies.
    public var session: URLSession {
        didSet { transport = TokenTransport(session) }
    }

    /// The client's own session, made from ``session``'s configuration.
    private var transport: TokenTransport
    /// The clock that stamps a token's ``OAuth2Token/issuedAt``: read when its request is sent.
    public var now: @Sendable () -> Date
    /// The `token_type`s accepted, compared without regard to letter case (default `["Bearer"]`).
    ///
    /// RFC 6749 §7.1: a client must not use a token of a type it does not understand. A token of
    /// any other type (`DPoP`, `mac`, …) fails the grant with ``OAuth2Error/unsupportedTokenType(_:)``.
    /// Add a type only if your requests are signed the way it needs (a closure `scheme` for it,
    /// and whatever proof the type asks for).
    public var acceptedTokenTypes: [String]
    /// The longest a token request may take, in seconds (default 30), whatever the session's
    /// own timeouts say: the request is cancelled then and fails with ``OAuth2Error/transport(_:)``
    /// carrying `URLError(.timedOut)`. Must be finite and above zero (see
    /// <doc:Errors#Invalid-configuration>).
    /// (URLSession does not enforce `timeoutIntervalForResource` on Linux: a body dripped a byte
    /// at a time would run on.) When the client refreshes for a ``RefreshingRequestClosure``, the
    /// request also ends before the closure would abandon the refresh, so a refresh through the
    /// built-in client always ends, with its result or an error. A request cancelled at its
    /// timeout may still have reached the server, which may have rotated the refresh token it
    /// carried: give the token endpoint the time it may take.
    public var requestTimeout: TimeInterval {
        didSet { requirePositiveSeconds(requestTimeout, "TokenEndpointClient.requestTimeout") }
    }
    /// Whether a `tokenURL` on plain `http` to another machine is sent to (default `false`): the
    /// client secret and the refresh token then travel unencrypted. For a development server on a
    /// private network; never in production. Without it, such a `tokenURL` fails every grant with
    /// ``OAuth2Error/insecureEndpoint(host:)`` before anything is sent.
    public var allowsPlainHTTP: Bool

    /// The largest token response read.
    static let maximumResponseSize = 1 << 20
    /// The proxies the environment names, which a plain-http `tokenURL` on this machine must not
    /// go through unless ``allowsPlainHTTP``. Tests replace it.
    var proxies = ProxyEnvironment.process

    /// Creates a client.
    public init(
        tokenURL: URL,
        clientID: String,
        clientSecret: String? = nil,
        clientAuthentication: ClientAuthenticationMethod = .basic,
        additionalParameters: [String: String] = [:],
        additionalHeaders: [String: String] = [:],
        session: URLSession = TokenEndpointClient.defaultSession,
        requestTimeout: TimeInterval = 30,
        acceptedTokenTypes: [String] = ["Bearer"],
        allowsPlainHTTP: Bool = false,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        requireText(clientID, "TokenEndpointClient.clientID")
        requirePositiveSeconds(requestTimeout, "TokenEndpointClient.requestTimeout")
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.chosenAuthentication = clientAuthentication
        self.additionalParameters = additionalParameters
        self.additionalHeaders = additionalHeaders
        self.session = session
        self.transport = TokenTransport(session)
        self.requestTimeout = requestTimeout
        self.acceptedTokenTypes = acceptedTokenTypes
        self.allowsPlainHTTP = allowsPlainHTTP
        self.now = now
    }

    /// An ephemeral session for token requests: nothing cached, no cookies.
    public static let defaultSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.timeoutIntervalForResource = 60
        return URLSession(configuration: configuration)
    }()

    // MARK: - Grants

    /// The `refresh_token` grant (RFC 6749 §6): a new access token for `token`.
    ///
    /// - Parameters:
    ///   - token: The token to refresh; its refresh token is sent.
    ///   - scope: A narrower scope to ask for; `nil` keeps the granted one. An answer without
    ///     `scope` has the scope asked for (RFC 6749 §5.1).
    /// - Throws: ``OAuth2Error``; ``OAuth2Error/noRefreshToken`` when `token` has none;
    ///   `CancellationError` when the task is cancelled.
    public func refresh(_ token: OAuth2Token, scope: String? = nil) async throws -> OAuth2Token {
        try await refresh(token, scope: scope, deadline: nil)
    }

    /// The `refresh_token` grant, ending by `deadline` at the latest (and within ``requestTimeout``).
    func refresh(_ token: OAuth2Token, scope: String? = nil, deadline: DispatchTime?) async throws -> OAuth2Token {
        guard let refreshToken = token.refreshToken, !refreshToken.isEmpty else { throw OAuth2Error.noRefreshToken }
        var parameters = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scope { parameters.append(("scope", scope)) }
        return try await request(
            parameters, secrets: [refreshToken], previous: token, requestedScope: scope, deadline: deadline)
    }

    /// The `authorization_code` grant (RFC 6749 §4.1.3), with the PKCE `code_verifier` (RFC 7636)
    /// when the authorization request sent a challenge.
    ///
    /// - Throws: ``OAuth2Error``, or `CancellationError` when the task is cancelled.
    public func exchange(code: String, redirectURI: String, codeVerifier: String? = nil) async throws -> OAuth2Token {
        var parameters = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]
        if let codeVerifier { parameters.append(("code_verifier", codeVerifier)) }
        return try await request(
            parameters, secrets: [code] + (codeVerifier.map { [$0] } ?? []), previous: nil, deadline: nil)
    }

    // MARK: - Grants, for code without async/await

    /// The `refresh_token` grant for callback-based code: the same request as the `async` form,
    /// with its result handed to `completion`.
    ///
    /// The request is sent at once. `completion` is called exactly once, on a thread of the
    /// system's, with the token or with the ``OAuth2Error`` the `async` form throws:
    ///
    /// ```swift
    /// client.refresh(token) { result in
    ///     if case .success(let fresh) = result { try? store.save(fresh) }
    /// }
    /// ```
    ///
    /// Inside a ``RefreshableAuthentication/refresh()``, `Future(operation:)` turns the `async`
    /// form into the ``Future`` it returns.
    public func refresh(
        _ token: OAuth2Token, scope: String? = nil,
        completion: @escaping @Sendable (Result<OAuth2Token, any Error>) -> Void
    ) {
        Future(operation: { try await self.refresh(token, scope: scope) }).observe(completion)
    }

    /// The `authorization_code` grant for callback-based code: for logging in from code that is
    /// not `async` (Moya-era code, say). `completion` is called exactly once, on a thread of the
    /// system's.
    public func exchange(
        code: String, redirectURI: String, codeVerifier: String? = nil,
        completion: @escaping @Sendable (Result<OAuth2Token, any Error>) -> Void
    ) {
        Future(operation: {
            try await self.exchange(code: code, redirectURI: redirectURI, codeVerifier: codeVerifier)
        }).observe(completion)
    }

    // MARK: - The request

    private func request(
        _ grant: [(String, String)], secrets: [String], previous: OAuth2Token?, requestedScope: String? = nil,
        deadline: DispatchTime?
    ) async throws -> OAuth2Token {
        // The client secret and the refresh token go only where nobody on the way can read them,
        // and only over http: a WebSocket URL (`wss`, or `ws` to this machine) is no token endpoint.
        guard let origin = Origin(tokenURL), origin.scheme == "https" || origin.scheme == "http",
            origin.isSecure || allowsPlainHTTP
        else {
            throw OAuth2Error.insecureEndpoint(host: tokenURL.host ?? "")
        }
        // This machine over plain http, through a proxy on another one (Linux: `http_proxy`).
        if !allowsPlainHTTP, !origin.isEncrypted, let proxy = proxies.remoteProxy(forPlain: "http", host: origin.host) {
            throw OAuth2Error.insecureEndpoint(host: proxy)
        }
        let request = makeRequest(grant)
        var end = DispatchTime.after(seconds: requestTimeout)
        if let deadline, deadline < end { end = deadline }
        // The token's life is counted from before the request left: the server issued it later,
        // so however long the answer took to arrive, the token never looks fresher than it is.
        let sentAt = now()
        let (data, response) = try await transport.transfer(request, limit: Self.maximumResponseSize, deadline: end)
        guard data.count <= Self.maximumResponseSize else { throw OAuth2Error.responseTooLarge }
        guard Self.isSameEndpoint(response.url, as: tokenURL) else {
            throw OAuth2Error.malformedResponse("the answer came from another address than the token endpoint")
        }
        // What was sent: the grant's secrets, the client secret and the Basic credential, and the
        // values of the additional parameters and headers (a client assertion, an API key).
        let basic = request.value(forHTTPHeaderField: "Authorization").map { String($0.dropFirst("Basic ".count)) }
        let sent =
            secrets + [clientSecret ?? "", clientID + ":" + (clientSecret ?? ""), basic ?? ""]
            + additionalParameters.values + additionalHeaders.values
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw Self.error(status: status, body: data, response: response, secrets: sent)
        }
        return try TokenResponse.token(
            from: data, issuedAt: sentAt, previous: previous, requestedScope: requestedScope,
            acceptedTypes: acceptedTokenTypes, secrets: sent)
    }

    /// Whether `url` is `tokenURL`'s scheme, host, port and path (a response without a URL is
    /// taken as the request's own).
    static func isSameEndpoint(_ url: URL?, as tokenURL: URL) -> Bool {
        guard let url else { return true }
        return url.scheme?.lowercased() == tokenURL.scheme?.lowercased()
            && url.host?.lowercased() == tokenURL.host?.lowercased() && url.port == tokenURL.port
            && url.path == tokenURL.path
    }

    private func makeRequest(_ grant: [(String, String)]) -> URLRequest {
        var parameters = grant
        // Decided once: `.basic` without a secret is `.none`.
        let method = clientAuthentication
        switch method {
        case .basic:
            break
        case .requestBody:
            parameters.append(("client_id", clientID))
            if let clientSecret { parameters.append(("client_secret", clientSecret)) }
        case .none:
            parameters.append(("client_id", clientID))
        }
        parameters += additionalParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var request = URLRequest(url: tokenURL)
        request.httpMethod = "POST"
        for (name, value) in additionalHeaders {
            request.setValue(value, forHTTPHeaderField: name)
        }
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if method == .basic {
            // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded.
            let credentials = FormURLEncoding.escape(clientID) + ":" + FormURLEncoding.escape(clientSecret ?? "")
            request.setValue(
                "Basic " + Data(credentials.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        request.httpBody = Data(FormURLEncoding.encode(parameters).utf8)
        return request
    }

    /// An error answer: RFC 6749 §5.2 JSON for a 4xx that carries one, else the status (with
    /// `Retry-After`): a redirect, a 5xx or any other status is the server's answer, whatever its
    /// body says. Every field is cleared of the `secrets` the client sent, in every encoding.
    static func error(status: Int, body: Data, response: URLResponse, secrets: [String]) -> OAuth2Error {
        // Any answer may ask for a pause: a 429 as much as a 503.
        let retryAfter = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After").flatMap {
            Self.seconds(fromRetryAfter: $0)
        }
        // Only a 4xx is RFC 6749 §5.2's error answer. A 5xx is the server in trouble, worth
        // retrying later; a redirect (never followed) or a 1xx is no verdict on the grant, so an
        // `invalid_grant` in its body must not end the session.
        if (400..<500).contains(status), let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let code = object["error"] as? String, !code.isEmpty
        {
            let redaction = SecretRedaction(secrets: secrets)
            let shown = { (text: String) in redaction.redact(OAuth2Error.withoutHiddenCharacters(text)) }
            let description = (object["error_description"] as? String).map(shown)
            let uri = (object["error_uri"] as? String).map(shown).flatMap(URL.init(string:))
            return .tokenEndpoint(
                TokenEndpointError(
                    code: TokenErrorCode(rawValue: shown(code)), errorDescription: description,
                    errorURI: uri, status: status, retryAfter: retryAfter))
        }
        // RFC 6749 §5.2: a 401 with an HTTP authentication challenge refuses the client's
        // credentials, whether or not its body (cut short when the challenge is refused) says so.
        if status == 401, (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "WWW-Authenticate") != nil {
            return .tokenEndpoint(TokenEndpointError(code: .invalidClient, status: status, retryAfter: retryAfter))
        }
        return .server(status: status, retryAfter: retryAfter)
    }

    /// The longest `Retry-After` honoured, in seconds: a day. A longer one (or a number too large
    /// for any integer type) is read as a day, so that no value can crash or lock the app out.
    static let maximumRetryAfter: TimeInterval = 86_400

    /// `Retry-After` as seconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3), clamped to
    /// 0...``maximumRetryAfter`` before anything converts it. Anything else is `nil`.
    static func seconds(fromRetryAfter value: String, now: Date = Date()) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // Digits only: however many, a Double holds them (at worst as infinity).
            return min(Double(trimmed) ?? maximumRetryAfter, maximumRetryAfter)
        }
        guard trimmed.utf8.count <= 64, let date = HTTPDate.secondsSince1970(trimmed, now: now) else { return nil }
        return min(max(0, date - now.timeIntervalSince1970), maximumRetryAfter)
    }
}

extension TokenEndpointClient: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The endpoint (without credentials or query) and client id; the secret is never shown.
    public var description: String {
        "TokenEndpointClient(\(endpoint), client \(clientID), secret \(secretSummary))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: no secret, and only the names of additional parameters
    /// and headers, whose values may be secrets too.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "tokenURL": endpoint,
                "clientID": clientID,
                "clientSecret": secretSummary,
                "clientAuthentication": clientAuthentication,
                "additionalParameters": additionalParameters.keys.sorted(),
                "additionalHeaders": additionalHeaders.keys.sorted(),
            ],
            displayStyle: .struct)
    }

    /// The token URL without user, password, query or fragment.
    private var endpoint: String {
        guard var components = URLComponents(url: tokenURL, resolvingAgainstBaseURL: true) else {
            return "(token URL)"
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "(token URL)"
    }

    private var secretSummary: String {
        clientSecret == nil ? "none" : "redacted"
    }
}
