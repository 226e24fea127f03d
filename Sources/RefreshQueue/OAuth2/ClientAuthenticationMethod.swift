/// How a client proves its identity to the token endpoint (RFC 6749 §2.3.1).
public enum ClientAuthenticationMethod: Sendable, Equatable {
    /// `Authorization: Basic base64(urlencode(client_id):urlencode(client_secret))`, which every
    /// server must support (the default).
    case basic
    /// `client_id` and `client_secret` as form parameters in the request body.
    case requestBody
    /// No secret: a public client (a mobile app using PKCE) sends only `client_id` in the body.
    case none
}
