extension SpotifyStub {
    /// A registered OAuth client: what a developer creates in Spotify's dashboard.
    ///
    /// The stub only accepts requests from clients it was created with, and only redirects to the
    /// URIs registered for them, so tests can exercise the "wrong client" and "wrong redirect"
    /// paths exactly as a real authorization server would reject them.
    public struct Client: Sendable, Equatable {
        /// The public client identifier, sent as `client_id`.
        public var id: String
        /// The confidential client secret, sent with `client_id` in HTTP Basic authentication or
        /// as `client_secret` in the token request body.
        public var secret: String
        /// The redirect URIs `/authorize` may send the user back to. Matching is by exact string
        /// comparison, as Spotify does, except that a loopback one registered without a port
        /// (`http://127.0.0.1/callback`) takes any port (see ``accepts(redirectURI:)``).
        public var redirectURIs: [String]

        /// Creates a client registration.
        public init(id: String, secret: String, redirectURIs: [String]) {
            self.id = id
            self.secret = secret
            self.redirectURIs = redirectURIs
        }

        /// The client the Example program and most tests use: `example-client` / `example-secret`,
        /// redirecting to `refreshqueue-example://callback` (an app), or to a loopback listener on
        /// any port (a command-line tool).
        public static let example = Client(
            id: "example-client",
            secret: "example-secret",
            redirectURIs: ["refreshqueue-example://callback", "http://127.0.0.1/callback", "http://[::1]/callback"]
        )

        /// Whether `/authorize` may send the user to `redirectURI`, as Spotify decides: a
        /// registered URI exactly; or, for a registered loopback URI without a port, the same URI
        /// with any port (RFC 8252 §7.3). `localhost` is never accepted, registered or not: only
        /// the IP literals `127.0.0.1` and `[::1]` are loopback addresses here.
        public func accepts(redirectURI: String) -> Bool {
            let requested = LoopbackURI(redirectURI)
            if requested?.host == "localhost" { return false }
            if redirectURIs.contains(redirectURI) { return true }
            guard let requested, requested.isLoopbackLiteral else { return false }
            return redirectURIs.contains { registered in
                guard let loopback = LoopbackURI(registered), loopback.isLoopbackLiteral, loopback.port == nil else {
                    return false
                }
                return loopback.host == requested.host && loopback.rest == requested.rest
            }
        }
    }
}

/// An `http://` URI taken apart the way the loopback rule needs: host, port and the rest.
private struct LoopbackURI {
    let host: String
    let port: Int?
    /// The path, query and fragment, as written.
    let rest: Substring

    init?(_ uri: String) {
        guard uri.lowercased().hasPrefix("http://") else { return nil }
        let afterScheme = uri.dropFirst("http://".count)
        let authorityEnd = afterScheme.firstIndex { "/?#".contains($0) } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        rest = afterScheme[authorityEnd...]
        guard !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[...close]).lowercased()
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            port = after.isEmpty ? nil : Int(after.dropFirst())
            if !after.isEmpty, port == nil { return nil }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = String(parts[0]).lowercased()
            port = parts.count == 2 ? Int(parts[1]) : nil
            if parts.count == 2, port == nil { return nil }
        }
        if let port, !(1...65_535).contains(port) { return nil }
    }

    var isLoopbackLiteral: Bool { host == "127.0.0.1" || host == "[::1]" }
}

extension SpotifyStub.Client: CustomStringConvertible, CustomDebugStringConvertible {
    /// The registration with the secret redacted, so that printing a client, or a failed test
    /// expectation that shows one, never reveals the secret.
    public var description: String {
        "Client(id: \(id), secret: <redacted>, redirectURIs: \(redirectURIs))"
    }

    /// Same as `description`: the secret is redacted in debug output too.
    public var debugDescription: String {
        description
    }
}
