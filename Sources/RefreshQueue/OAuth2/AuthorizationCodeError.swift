import Foundation

/// Why the redirect of an ``AuthorizationCodeRequest`` yields no authorization code.
public enum AuthorizationCodeError: Error, Sendable, Equatable {
    /// The redirect does not lead to the request's redirect URI.
    case notTheRedirectURI
    /// The redirect's `state` is not the request's: it may be forged (cross-site request forgery)
    /// or belong to another attempt. Its code must not be used.
    case stateMismatch
    /// The authorization server answered with an error (RFC 6749 §4.1.2.1): `access_denied` when
    /// the user declined, `invalid_scope`, …; `description` is its `error_description`.
    case authorizationFailed(error: String, description: String?)
    /// The redirect carries no error and no usable code: none, an empty one, or more than one.
    case missingCode
    /// A code verifier given to ``AuthorizationCodeRequest/init(authorizationEndpoint:clientID:redirectURI:scope:state:codeVerifier:additionalParameters:)``
    /// is not 43 to 128 unreserved characters, or the state is empty.
    case invalidCodeVerifier
}

extension AuthorizationCodeError: CustomStringConvertible, LocalizedError {
    /// Sentences a person can act on: what happened, then what to do.
    public var description: String {
        switch self {
        case .notTheRedirectURI:
            return "The redirect does not lead to the registered redirect URI. "
                + "Pass the URL the app received at the redirect URI of this login."
        case .stateMismatch:
            return "The redirect's state does not match the authorization request: it may be forged; "
                + "its code was not used. Start a new login."
        case .authorizationFailed(let error, _):
            let code = String(
                error.unicodeScalars.filter { (0x21...0x7E).contains($0.value) }.map(Character.init).prefix(40))
            let advice =
                code == "access_denied"
                ? "The user declined; offer to log in again." : "Check the client's registration and scope."
            return "The authorization server refused: \(code). \(advice)"
        case .missingCode:
            return "The redirect carries no usable authorization code. Start a new login."
        case .invalidCodeVerifier:
            return "A PKCE code verifier must be 43 to 128 characters from A-Z, a-z, 0-9 and - . _ ~, with a state. "
                + "Leave both out to have them made."
        }
    }

    /// The same text as ``description``, so that `localizedDescription` is readable.
    public var errorDescription: String? { description }
}
