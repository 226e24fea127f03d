import Foundation

/// The authorization-code flow's first leg: the `/authorize` URL, with `state` against CSRF and a
/// PKCE challenge (RFC 7636) so that an intercepted code is useless without the verifier.
struct AuthorizationRequest {
    let clientID: String
    let redirectURI: String
    let scope: String
    let state = UUID().uuidString
    /// The PKCE verifier; sent with the code exchange, never in a URL.
    let codeVerifier = UUID().uuidString + UUID().uuidString

    /// `/authorize?client_id&response_type=code&redirect_uri&state&scope&code_challenge…`.
    func url(base: URL) -> URL? {
        var components = URLComponents(url: base.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "scope", value: scope),
            URLQueryItem(name: "code_challenge_method", value: "plain"),
            URLQueryItem(name: "code_challenge", value: codeVerifier),
        ]
        return components?.url
    }

    /// The code in the redirect, after checking that it answers this request.
    func code(fromRedirect location: String) throws -> String {
        guard let redirect = URLComponents(string: location) else {
            throw ExampleError.authorization("the redirect is not a URL")
        }
        let query = Dictionary(
            (redirect.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        guard query["state"] == state else {
            throw ExampleError.authorization("the state in the redirect does not match: possible CSRF")
        }
        if let error = query["error"] {
            throw ExampleError.authorization(error)
        }
        guard let code = query["code"], !code.isEmpty else {
            throw ExampleError.authorization("the redirect carries no code")
        }
        return code
    }
}
