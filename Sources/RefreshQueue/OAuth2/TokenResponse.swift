import Foundation

/// Reading a successful token response (RFC 6749 §5.1).
enum TokenResponse {
    /// The token in `data`, received at `receivedAt`.
    ///
    /// `access_token` and `token_type` are required; `expires_in` may be a number or a numeric
    /// string; unknown fields are ignored. Without a new `refresh_token`, the one of `previous`
    /// is kept (RFC 6749 §6).
    static func token(from data: Data, receivedAt: Date, previous: OAuth2Token?) throws -> OAuth2Token {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw OAuth2Error.malformedResponse("the body is not a JSON object")
        }
        guard let accessToken = object["access_token"] as? String, !accessToken.isEmpty else {
            throw OAuth2Error.malformedResponse("access_token is missing")
        }
        guard let tokenType = object["token_type"] as? String, !tokenType.isEmpty else {
            throw OAuth2Error.malformedResponse("token_type is missing")
        }
        let expiresIn: TimeInterval?
        switch object["expires_in"] {
        case let number as NSNumber: expiresIn = number.doubleValue
        case let text as String: expiresIn = TimeInterval(text)
        default: expiresIn = nil
        }
        let refreshToken = (object["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return OAuth2Token(
            accessToken: accessToken,
            tokenType: tokenType,
            refreshToken: refreshToken ?? previous?.refreshToken,
            scope: object["scope"] as? String ?? previous?.scope,
            issuedAt: receivedAt,
            expiresIn: expiresIn.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil })
    }
}
