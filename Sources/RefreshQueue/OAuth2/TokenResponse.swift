import Foundation

/// Reading a successful token response (RFC 6749 §5.1).
enum TokenResponse {
    /// The longest lifetime taken from `expires_in`: a year. A longer one is read as a year.
    static let maximumLifetime: TimeInterval = 365 * 86_400

    /// The token in `data`, issued at `issuedAt` at the earliest: when its request was sent, so
    /// that its lifetime, counted from then, never ends later than the server's.
    ///
    /// `access_token` and `token_type` are required; `expires_in` may be a number or a numeric
    /// string; unknown fields are ignored. Without a new `refresh_token`, the one of `previous`
    /// is kept (RFC 6749 §6). Without `scope`, the token has the scope that was asked for,
    /// `requestedScope`, or when none was, the one of `previous` (RFC 6749 §5.1 and §6).
    /// Refused as ``OAuth2Error/malformedResponse(_:)``: an access token that cannot go in an
    /// HTTP header (control characters, spaces at either end, non-ASCII), and an `expires_in`
    /// that is negative, not a number (`true` included), or not finite. One longer than a year
    /// is read as a year. A `token_type` not in `acceptedTypes` (compared without regard to letter
    /// case) is refused as ``OAuth2Error/unsupportedTokenType(_:)``, which keeps of it only what
    /// a log line may show: none of the `secrets` the client sent, should the server echo one,
    /// and neither token of the answer itself.
    static func token(
        from data: Data, issuedAt: Date, previous: OAuth2Token?, requestedScope: String? = nil,
        acceptedTypes: [String] = ["Bearer"], secrets: [String] = []
    ) throws -> OAuth2Token {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw OAuth2Error.malformedResponse("the body is not a JSON object")
        }
        guard let accessToken = object["access_token"] as? String, !accessToken.isEmpty else {
            throw OAuth2Error.malformedResponse("access_token is missing")
        }
        guard AuthorizationScheme.isUsableToken(accessToken) else {
            throw OAuth2Error.malformedResponse("access_token has characters that cannot go in an HTTP header")
        }
        guard let tokenType = object["token_type"] as? String, !tokenType.isEmpty else {
            throw OAuth2Error.malformedResponse("token_type is missing")
        }
        let refreshToken = (object["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        guard acceptedTypes.contains(where: { $0.caseInsensitiveCompare(tokenType) == .orderedSame }) else {
            // Invisible characters go first, so that none can split a secret and hide it, and each
            // secret is also looked for without its own; the cut to 40 comes last, so that no
            // secret longer than that is kept cut but readable. The tokens of this very answer
            // are secrets too, should the server write one into the type.
            let hidden = secrets + [accessToken, refreshToken ?? ""]
            let redaction = SecretRedaction(secrets: hidden + hidden.map(OAuth2Error.visible))
            throw OAuth2Error.unsupportedTokenType(
                OAuth2Error.printable(redaction.redact(OAuth2Error.visible(tokenType))))
        }
        return OAuth2Token(
            accessToken: accessToken,
            tokenType: tokenType,
            refreshToken: refreshToken ?? previous?.refreshToken,
            scope: object["scope"] as? String ?? requestedScope ?? previous?.scope,
            issuedAt: issuedAt,
            expiresIn: try lifetime(object["expires_in"]))
    }

    /// `expires_in` in seconds, `nil` when absent.
    private static func lifetime(_ value: Any?) throws -> TimeInterval? {
        let seconds: TimeInterval?
        switch value {
        case nil, is NSNull: return nil
        // JSON's `true` and `false` arrive as numbers too (of the C type `char`), never a lifetime.
        case let number as NSNumber: seconds = Self.isBoolean(number) ? nil : number.doubleValue
        case let text as String: seconds = TimeInterval(text.trimmingCharacters(in: .whitespaces))
        default: seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds >= 0 else {
            throw OAuth2Error.malformedResponse("expires_in is not a number of seconds from 0 up")
        }
        return min(seconds, maximumLifetime)
    }

    /// Whether `number` is JSON's `true` or `false`: JSONSerialization gives those (and only
    /// those) the C type `char`, on Linux and Apple systems alike. (`is Bool` does not tell them
    /// apart: a number 0 or 1 also converts to `Bool`.)
    private static func isBoolean(_ number: NSNumber) -> Bool {
        number.objCType.pointee == CChar(UInt8(ascii: "c"))
    }
}
