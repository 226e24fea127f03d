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
        /// The exact redirect URIs `/authorize` may send the user back to. Matching is by exact
        /// string comparison, as Spotify does.
        public var redirectURIs: [String]

        /// Creates a client registration.
        public init(id: String, secret: String, redirectURIs: [String]) {
            self.id = id
            self.secret = secret
            self.redirectURIs = redirectURIs
        }

        /// The client the Example program and most tests use: `example-client` / `example-secret`,
        /// redirecting to `refreshqueue-example://callback`.
        public static let example = Client(
            id: "example-client",
            secret: "example-secret",
            redirectURIs: ["refreshqueue-example://callback"]
        )
    }
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
