import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request to an OAuth 2.0 token endpoint failed.
///
/// The cases separate what a caller handles differently: the server refused the grant
/// (``tokenEndpoint(_:)``: read ``TokenEndpointError/code``; `invalid_grant` means log in again),
/// the server is in trouble (``server(status:retryAfter:)``: try later), the answer was not a
/// token response (``malformedResponse(_:)``), or the network failed (``transport(_:)``).
/// ``requiresReauthentication`` says whether only a new login helps. No case's text contains a
/// token or a client secret of 4 characters or more (shorter values are not looked for: removing
/// them would mangle ordinary words). It is `Equatable`, so a test can expect an exact one.
public enum OAuth2Error: Error, Sendable, Equatable {
    /// The server answered with an RFC 6749 §5.2 error.
    case tokenEndpoint(TokenEndpointError)
    /// The server answered with a status that is not an RFC 6749 error (5xx, a redirect, which
    /// the client never follows, or an error page), with the `Retry-After` delay in seconds when it
    /// sent one. Only a 4xx answer's JSON is read as an RFC 6749 error.
    case server(status: Int, retryAfter: TimeInterval?)
    /// A 200 answer that is not a usable token response (not JSON, or `access_token` or
    /// `token_type` missing).
    case malformedResponse(String)
    /// The answer was larger than the 1 MiB a token response may take.
    case responseTooLarge
    /// The token's `token_type` is not one the client accepts (RFC 6749 §7.1): a `DPoP` or `mac`
    /// token must not be sent as a Bearer token. See ``TokenEndpointClient/acceptedTokenTypes``.
    /// Holds the type's visible ASCII characters (at most 40), without any secret of 4 characters
    /// or more that the client sent.
    case unsupportedTokenType(String)
    /// The authentication has no refresh token, so it cannot be refreshed.
    case noRefreshToken
    /// The request did not get an answer: offline, timed out, connection lost. The error holds
    /// its code only, not the session's details, which name the token URL (whose query or user
    /// part may carry a credential).
    case transport(URLError)
    /// The token endpoint is not reached over https (or over plain http on this machine), so the
    /// client secret and the refresh token would cross the network readable by anyone on the way
    /// (RFC 6749 §3.2 requires TLS). Nothing was sent. Holds the endpoint's host; or, for an
    /// endpoint on this machine that the environment sends through a proxy on another (on Linux:
    /// `http_proxy` or `all_proxy`, unless `no_proxy` lists the endpoint's host), the proxy's.
    case insecureEndpoint(host: String)
}

extension OAuth2Error: RefreshFailure {
    /// True for `invalid_grant` (the refresh token expired or was revoked) and for a missing
    /// refresh token: only a new login helps. False for everything worth retrying later.
    public var requiresReauthentication: Bool {
        switch self {
        case .tokenEndpoint(let error): return error.code == .invalidGrant
        case .noRefreshToken: return true
        case .server, .malformedResponse, .responseTooLarge, .unsupportedTokenType, .transport, .insecureEndpoint:
            return false
        }
    }
}

extension OAuth2Error: CustomStringConvertible, LocalizedError, TokenFreeError {
    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .tokenEndpoint(let error):
            let advice = requiresReauthentication ? " The user needs to log in again." : ""
            return "The token endpoint refused the request: \(error).\(advice)"
        case .server(let status, let retryAfter):
            // Clamped before converting: an error built by hand may carry any value.
            let later = retryAfter.flatMap {
                $0.isFinite ? " Retry after \(Int64(saturating: max(0, $0).rounded(.up))) s." : nil
            }
            return "The token endpoint answered HTTP \(status).\(later ?? "")"
        case .malformedResponse(let reason):
            return "The token endpoint's answer is not a usable token response: \(reason)."
        case .unsupportedTokenType(let type):
            return
                "The token endpoint issued a token of type \"\(Self.printable(type))\", which this client does not accept."
        case .responseTooLarge:
            return "The token endpoint's answer is larger than 1 MiB."
        case .noRefreshToken:
            return "There is no refresh token; the user needs to log in again."
        case .transport(let error):
            return "The token endpoint could not be reached: \(Self.explanation(of: error.code)) "
                + "(URLError \(error.code.rawValue)). The refresh is tried again with the next request."
        case .insecureEndpoint(let host):
            return
                "The token endpoint is not reached over https: the request would reach \"\(Self.printable(host))\" "
                + "unencrypted; nothing was sent."
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }

    /// What a transport failure means, in words: Linux's Foundation has no text for an error
    /// made from its code alone, and the error's own details (which name the URL) are not kept.
    static func explanation(of code: URLError.Code) -> String {
        switch code {
        case .timedOut: return "the request timed out"
        case .notConnectedToInternet: return "the device is offline"
        case .networkConnectionLost: return "the connection was lost"
        case .cannotFindHost, .dnsLookupFailed: return "the server's name does not resolve"
        case .cannotConnectToHost: return "nothing accepted the connection"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            return "the secure connection could not be established"
        case .cancelled: return "the request was cancelled"
        case .badServerResponse, .cannotParseResponse: return "the server's answer could not be read"
        case .internationalRoamingOff, .dataNotAllowed, .callIsActive: return "the device may not use the network now"
        default: return "the network failed"
        }
    }

    /// At most 40 visible ASCII characters of a server's word, for a log line.
    static func printable(_ text: String) -> String {
        String(visible(text).prefix(40))
    }

    /// A server's sentence without the characters that show nothing (controls, line breaks and
    /// invisible formatting such as zero-width spaces): none of them can split a secret so that
    /// it is no longer found, nor start a new line in a log.
    static func withoutHiddenCharacters(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    switch $0.properties.generalCategory {
                    case .control, .format, .lineSeparator, .paragraphSeparator: return false
                    default: return true
                    }
                }))
    }

    /// The visible ASCII characters of a server's word, all of them.
    static func visible(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x21...0x7E).contains($0.value) }))
    }
}

/// An error answer of a token endpoint (RFC 6749 §5.2).
public struct TokenEndpointError: Sendable, Equatable, CustomStringConvertible {
    /// The `error` code.
    public var code: TokenErrorCode
    /// `error_description`, with anything of 4 characters or more that the client sent as a
    /// secret (refresh token, code, client secret) removed in case the server echoed it, and
    /// without the characters that show nothing (controls, line breaks, zero-width formatting).
    public var errorDescription: String?
    /// `error_uri`.
    public var errorURI: URL?
    /// The HTTP status it came with (usually 400, or 401 for `invalid_client`; 429 when the
    /// server throttles).
    public var status: Int
    /// The answer's `Retry-After`, in seconds (at most a day), when it carried one: no refresh is
    /// sent before that time.
    public var retryAfter: TimeInterval?

    /// Creates an error answer.
    public init(
        code: TokenErrorCode, errorDescription: String? = nil, errorURI: URL? = nil, status: Int = 400,
        retryAfter: TimeInterval? = nil
    ) {
        self.code = code
        self.errorDescription = errorDescription
        self.errorURI = errorURI
        self.status = status
        self.retryAfter = retryAfter
    }

    /// `code (status): description`.
    public var description: String {
        var text = "\(code.rawValue) (HTTP \(status))"
        if let errorDescription, !errorDescription.isEmpty { text += ": \(errorDescription)" }
        if let retryAfter, retryAfter.isFinite {
            text += "; retry after \(Int64(saturating: max(0, retryAfter).rounded(.up))) s"
        }
        return text
    }
}

/// An RFC 6749 §5.2 `error` code. Codes the RFC does not define are kept verbatim in ``other(_:)``.
public enum TokenErrorCode: Sendable, Equatable, Hashable, RawRepresentable {
    /// The request is missing a parameter or is otherwise malformed.
    case invalidRequest
    /// Client authentication failed: check the client id and secret.
    case invalidClient
    /// The grant (authorization code or refresh token) is invalid, expired or revoked: log in again.
    case invalidGrant
    /// This client may not use this grant type.
    case unauthorizedClient
    /// The server does not support this grant type.
    case unsupportedGrantType
    /// The requested scope is invalid or exceeds what was granted.
    case invalidScope
    /// A code RFC 6749 does not define, kept as the server sent it.
    case other(String)

    /// The code as sent on the wire.
    public var rawValue: String {
        switch self {
        case .invalidRequest: return "invalid_request"
        case .invalidClient: return "invalid_client"
        case .invalidGrant: return "invalid_grant"
        case .unauthorizedClient: return "unauthorized_client"
        case .unsupportedGrantType: return "unsupported_grant_type"
        case .invalidScope: return "invalid_scope"
        case .other(let code): return code
        }
    }

    /// The code for a wire value; unknown values become ``other(_:)``.
    public init(rawValue: String) {
        switch rawValue {
        case "invalid_request": self = .invalidRequest
        case "invalid_client": self = .invalidClient
        case "invalid_grant": self = .invalidGrant
        case "unauthorized_client": self = .unauthorizedClient
        case "unsupported_grant_type": self = .unsupportedGrantType
        case "invalid_scope": self = .invalidScope
        default: self = .other(rawValue)
        }
    }
}

extension OAuth2Error {
    /// The `Retry-After` of an answer that carried one — a ``server(status:retryAfter:)`` (503, or
    /// a 429 without an error body) or a ``tokenEndpoint(_:)`` error (a 429 with one, say);
    /// `nil` otherwise.
    public var retryAfter: TimeInterval? {
        switch self {
        case .server(_, let retryAfter): return retryAfter
        case .tokenEndpoint(let error): return error.retryAfter
        default: return nil
        }
    }
}

extension OAuth2Error {
    /// True for ``transport(_:)``.
    public var isTransportFailure: Bool {
        if case .transport = self { return true }
        return false
    }
}
