import Foundation

/// The first leg of the OAuth 2.0 authorization-code flow, with PKCE (RFC 7636, method `S256`):
/// the URL to open in a browser, and the check of the redirect that comes back.
///
/// RFC 9700 (the OAuth 2.0 security best practice) asks every client for PKCE with `S256`; Spotify's
/// flow for apps without a client secret requires it. The request makes a random `state` (against
/// cross-site request forgery) and a random code verifier, and sends only the verifier's SHA-256
/// in the URL; the verifier itself goes with the code exchange, so an intercepted code is useless
/// without it.
///
/// ```swift
/// let request = AuthorizationCodeRequest(
///     authorizationEndpoint: URL(string: "https://accounts.spotify.com/authorize")!,
///     clientID: "your-client-id", redirectURI: "myapp://callback", scope: "user-read-private")
/// open(request.url)                                  // the user logs in and consents
/// // …the app is opened with the redirect:
/// let code = try request.code(fromRedirect: redirectURL)
/// let token = try await client.exchange(code: code, for: request)
/// ```
///
/// The verifier is a secret until the exchange: neither the description nor a mirror shows it.
public struct AuthorizationCodeRequest: Sendable, Equatable {
    /// The authorization endpoint, `…/authorize`.
    public let authorizationEndpoint: URL
    /// The client identifier.
    public let clientID: String
    /// Where the authorization server sends the user back; it must be registered for the client.
    public let redirectURI: String
    /// The scope asked for, space-separated, or `nil` for the client's default.
    public let scope: String?
    /// The random value the redirect must carry back unchanged.
    public let state: String
    /// The PKCE code verifier: 64 random characters from the unreserved set (RFC 7636 §4.1).
    /// Send it with the code exchange, nowhere else.
    public let codeVerifier: String
    /// Further query parameters for the authorization URL (`show_dialog`, say).
    public let additionalParameters: [String: String]

    /// Creates a request with a fresh random `state` and code verifier.
    ///
    /// `clientID` and a given `scope` must hold more than white space, and `redirectURI` must be
    /// an absolute URI (with a scheme); other values stop the program (see
    /// <doc:Errors#Invalid-configuration>).
    public init(
        authorizationEndpoint: URL, clientID: String, redirectURI: String, scope: String? = nil,
        additionalParameters: [String: String] = [:]
    ) {
        Self.check(clientID: clientID, redirectURI: redirectURI, scope: scope)
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = Self.randomString(length: 32)
        self.codeVerifier = Self.randomString(length: 64)
        self.additionalParameters = additionalParameters
    }

    /// Creates a request with the given `state` and code verifier, for tests and for flows that
    /// must persist them across a restart of the app.
    ///
    /// The persisted `state` and verifier are data, checked with a thrown error; `clientID`,
    /// `redirectURI` and `scope` are configuration, checked as the other initializer checks them.
    ///
    /// - Throws: ``AuthorizationCodeError/invalidCodeVerifier`` unless the verifier is 43 to 128
    ///   characters from `A-Z a-z 0-9 - . _ ~` (RFC 7636 §4.1), and for an empty `state`.
    public init(
        authorizationEndpoint: URL, clientID: String, redirectURI: String, scope: String? = nil, state: String,
        codeVerifier: String, additionalParameters: [String: String] = [:]
    ) throws(AuthorizationCodeError) {
        Self.check(clientID: clientID, redirectURI: redirectURI, scope: scope)
        guard (43...128).contains(codeVerifier.utf8.count), codeVerifier.utf8.allSatisfy(Self.isUnreserved),
            !state.isEmpty
        else { throw .invalidCodeVerifier }
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.codeVerifier = codeVerifier
        self.additionalParameters = additionalParameters
    }

    private static func check(clientID: String, redirectURI: String, scope: String?) {
        requireText(clientID, "AuthorizationCodeRequest.clientID")
        requireValidConfiguration(
            URLComponents(string: redirectURI)?.scheme?.isEmpty == false, "AuthorizationCodeRequest.redirectURI",
            mustBe: "an absolute URI with a scheme", given: "\"\(redirectURI)\"")
        if let scope { requireText(scope, "AuthorizationCodeRequest.scope") }
    }

    /// `BASE64URL(SHA256(codeVerifier))`, without padding (RFC 7636 §4.2).
    public var codeChallenge: String {
        Data(SHA256.hash(Array(codeVerifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The URL to open: `response_type=code`, the client, the redirect URI, the scope, `state`, the
    /// code challenge and `code_challenge_method=S256`, then the additional parameters.
    public var url: URL {
        var components =
            URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: true)
            ?? URLComponents()
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
        ]
        if let scope { items.append(URLQueryItem(name: "scope", value: scope)) }
        items += [
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: codeChallenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        items += additionalParameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        components.queryItems = items
        // `+` in a query means a space to most servers: escape it too.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url ?? authorizationEndpoint
    }

    /// The authorization code in `redirect`, after checking that it answers this request.
    ///
    /// - Throws: ``AuthorizationCodeError/notTheRedirectURI`` when `redirect` does not lead to
    ///   ``redirectURI``; ``AuthorizationCodeError/stateMismatch`` when its `state` is not this
    ///   request's (a forged or stale redirect: never use its code);
    ///   ``AuthorizationCodeError/authorizationFailed(error:description:)`` when the server
    ///   answered with `error=` (`access_denied` when the user declined);
    ///   ``AuthorizationCodeError/missingCode`` when there is no error and no usable code (none,
    ///   an empty one, or more than one).
    public func code(fromRedirect redirect: URL) throws(AuthorizationCodeError) -> String {
        guard let expected = URLComponents(string: redirectURI),
            let received = URLComponents(url: redirect, resolvingAgainstBaseURL: true),
            received.scheme?.lowercased() == expected.scheme?.lowercased(),
            received.host?.lowercased() == expected.host?.lowercased(), received.port == expected.port,
            received.path == expected.path
        else { throw .notTheRedirectURI }
        var parameters: [String: [String]] = [:]
        for item in received.queryItems ?? [] {
            parameters[item.name, default: []].append(item.value ?? "")
        }
        // The state is checked before anything else is believed, errors included.
        guard parameters["state"] == [state] else { throw .stateMismatch }
        if let error = parameters["error"]?.first {
            throw .authorizationFailed(error: error, description: parameters["error_description"]?.first)
        }
        guard let codes = parameters["code"], codes.count == 1, let code = codes.first, !code.isEmpty else {
            throw .missingCode
        }
        return code
    }

    /// A random string of unreserved characters (62 letters and digits and `-._~`).
    static func randomString(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

extension AuthorizationCodeRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The endpoint, client and redirect URI; the code verifier is never shown.
    public var description: String {
        "AuthorizationCodeRequest(\(authorizationEndpoint.absoluteString), client \(clientID), redirect \(redirectURI), "
            + "code verifier redacted)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: no code verifier.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "authorizationEndpoint": authorizationEndpoint, "clientID": clientID, "redirectURI": redirectURI,
                "scope": scope as Any, "state": state, "codeVerifier": "redacted",
            ],
            displayStyle: .struct)
    }
}

extension TokenEndpointClient {
    /// The `authorization_code` grant for the code that answered `request`, with its redirect URI
    /// and PKCE code verifier.
    ///
    /// - Throws: ``OAuth2Error``.
    public func exchange(code: String, for request: AuthorizationCodeRequest) async throws -> OAuth2Token {
        try await exchange(code: code, redirectURI: request.redirectURI, codeVerifier: request.codeVerifier)
    }

    /// The `authorization_code` grant for the code that answered `request`, for callback-based
    /// code: `completion` is called exactly once, on a thread of the system's.
    ///
    /// ```swift
    /// client.exchange(code: code, for: login) { result in
    ///     DispatchQueue.main.async { showResult(result) }
    /// }
    /// ```
    public func exchange(
        code: String, for request: AuthorizationCodeRequest,
        completion: @escaping @Sendable (Result<OAuth2Token, any Error>) -> Void
    ) {
        exchange(
            code: code, redirectURI: request.redirectURI, codeVerifier: request.codeVerifier, completion: completion)
    }
}
