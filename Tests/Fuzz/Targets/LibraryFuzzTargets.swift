import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if !FUZZING
@testable import RefreshQueue
#endif

/// The library's parsers of untrusted input: what a token endpoint answers, the header values it
/// would have us send, and the token file another process (or an older version) wrote.
enum LibraryFuzzTargets {
    static let all = [
        FuzzTarget(name: "token-response", check: tokenResponse),
        FuzzTarget(name: "token-error", check: tokenError),
        FuzzTarget(name: "header-value", check: headerValue),
        FuzzTarget(name: "stored-format", check: storedFormat),
    ]

    /// What the client sent and the server might echo back. The client secret has characters that
    /// form encoding, percent encoding and base64 all change, so that each form is exercised.
    static let refreshToken = "rt.fuzz-SECRET_0001"
    static let clientID = "fuzz-client"
    static let clientSecret = "cs/fuzz+SECRET=0002"
    static var basicCredential: String { Data("\(clientID):\(clientSecret)".utf8).base64EncodedString() }
    static var sentSecrets: [String] {
        [refreshToken, clientSecret, "\(clientID):\(clientSecret)", basicCredential]
    }

    /// Every form in which a secret must never appear in what the library shows.
    static var forbiddenForms: [String] {
        var forms: [String] = []
        for secret in [refreshToken, clientSecret] {
            forms.append(secret)
            if let percent = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                forms.append(percent)
            }
            forms.append(Data(secret.utf8).base64EncodedString())
        }
        return forms + [basicCredential]
    }

    private static func leaks(_ text: String, _ what: String) -> [String] {
        forbiddenForms.filter { text.contains($0) }.map { _ in "\(what) shows a secret" }
    }

    // MARK: - Token response (RFC 6749 §5.1)

    /// The body of a 200 answer. Accepted tokens must fit in a header and have a lifetime within
    /// bounds; no description shows a token; errors are typed and show no secret.
    static func tokenResponse(_ data: Data) -> [String] {
        let receivedAt = Date(timeIntervalSince1970: 1_700_000_000)
        let previous = OAuth2Token(
            accessToken: "at.previous-0000", tokenType: "Bearer", refreshToken: refreshToken, scope: nil,
            issuedAt: receivedAt, expiresIn: 3600)
        do {
            let token = try TokenResponse.token(
                from: data, issuedAt: receivedAt, previous: previous, secrets: sentSecrets)
            var findings: [String] = []
            if (try? AuthorizationScheme.bearer.headerValue(for: token.accessToken)) == nil {
                findings.append("accepted an access token that cannot be sent in a header")
            }
            if let lifetime = token.lifetime, !(lifetime >= 0 && lifetime <= TokenResponse.maximumLifetime) {
                findings.append("accepted a lifetime of \(lifetime) s")
            }
            // What is shown of a token does not depend on the tokens themselves.
            var other = token
            other.accessToken = "a"
            other.refreshToken = token.refreshToken.map { _ in "r" }
            if token.description != other.description || String(reflecting: token) != String(reflecting: other) {
                findings.append("a token's description shows its tokens")
            }
            return findings
        } catch let error as OAuth2Error {
            return leaks(error.description, "the error") + leaks(String(reflecting: error), "the error")
                + issuedTokenShown(in: error, answer: data)
        } catch {
            return ["an untyped error: \(type(of: error))"]
        }
    }

    /// Whether the refused token type shows a token the answer itself issued. Only tokens of 8
    /// visible characters or more, with no bracket, are looked for: a shorter one may be any word
    /// of the type, and a bracket may join a token's end to the redaction mark (as may a token
    /// that is part of the mark).
    private static func issuedTokenShown(in error: OAuth2Error, answer: Data) -> [String] {
        guard case .unsupportedTokenType(let shown) = error,
            let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any]
        else { return [] }
        let issued = ["access_token", "refresh_token"].compactMap { object[$0] as? String }.map(OAuth2Error.visible)
        return issued.filter {
            $0.count >= 8 && !$0.contains("[") && !$0.contains("]") && !SecretRedaction.replacement.contains($0)
                && shown.contains($0)
        }
        .map { _ in "the refused token type shows a token of the answer" }
    }

    // MARK: - Error answer (RFC 6749 §5.2) and Retry-After

    /// Byte 0 picks the status (400–599), the bytes up to the first newline are the `Retry-After`
    /// value, the rest is the body. The delay is within 0…a day; nothing shows a secret the client
    /// sent, in any encoding, however the server echoes it.
    static func tokenError(_ data: Data) -> [String] {
        let bytes = [UInt8](data)
        let status = 400 + Int(bytes.first ?? 0) % 200
        let rest = bytes.dropFirst()
        let newline = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
        let retryAfterValue = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
        let body = Data(rest[min(newline + 1, rest.endIndex)...])
        var findings: [String] = []

        let parsed = TokenEndpointClient.seconds(fromRetryAfter: retryAfterValue)
        if let parsed, !(parsed >= 0 && parsed <= TokenEndpointClient.maximumRetryAfter) {
            findings.append("Retry-After read as \(parsed) s")
        }
        guard let url = URL(string: "https://accounts.example.com/api/token"),
            let response = HTTPURLResponse(
                url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": retryAfterValue])
        else { return findings }
        let error = TokenEndpointClient.error(status: status, body: body, response: response, secrets: sentSecrets)
        let retryAfter: TimeInterval?
        switch error {
        case .tokenEndpoint(let answer):
            retryAfter = answer.retryAfter
            findings += leaks(answer.code.rawValue, "the error code")
            findings += leaks(answer.errorDescription ?? "", "error_description")
            findings += leaks(answer.errorURI?.absoluteString ?? "", "error_uri")
        case .server(_, let after):
            retryAfter = after
        default:
            retryAfter = nil
            findings.append("an error answer read as \(error)")
        }
        if let retryAfter, !(retryAfter >= 0 && retryAfter <= TokenEndpointClient.maximumRetryAfter) {
            findings.append("the error carries Retry-After \(retryAfter) s")
        }
        findings += leaks(error.description, "the error")
        findings += leaks(String(reflecting: error), "the error")
        findings += leaks(error.localizedDescription, "the error")
        // What the closure is told (the pause before the next refresh) must be within bounds too.
        if let pause = error.retryAfter,
            !(pause >= 0 && pause <= TokenEndpointClient.maximumRetryAfter)
        {
            findings.append("the closure is told to wait \(pause) s")
        }
        return findings
    }

    // MARK: - Header values

    /// A token taken as it comes: usable exactly when it is visible ASCII or inner spaces, and
    /// then it is the whole header value, once; otherwise refused.
    static func headerValue(_ data: Data) -> [String] {
        let token = String(decoding: data, as: UTF8.self)
        let scalars = Array(token.unicodeScalars)
        let expected =
            !scalars.isEmpty && scalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } && scalars.first != " "
            && scalars.last != " "
        var findings: [String] = []
        if AuthorizationScheme.isUsableToken(token) != expected {
            findings.append("isUsableToken is \(!expected) for a token that is \(expected ? "" : "not ")usable")
        }
        let scheme = AuthorizationScheme.bearer
        guard let value = try? scheme.headerValue(for: token) else {
            if expected { findings.append("a usable token was refused") }
            return findings
        }
        if !expected { findings.append("an unusable token was accepted") }
        guard let url = URL(string: "https://api.example.com/v1/me") else { return findings }
        var request = URLRequest(url: url)
        request.setValue("Bearer stale", forHTTPHeaderField: "authorization")
        scheme.sign(&request, with: value)
        let fields = request.allHTTPHeaderFields ?? [:]
        let authorization = fields.filter { $0.key.lowercased() == "authorization" }
        if authorization.count != 1 || authorization.first?.value != "Bearer " + token {
            findings.append("the signed request does not carry exactly the token once")
        }
        let isToken = AuthorizationScheme.isHTTPToken(token)
        let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        if isToken != (!token.isEmpty && token.allSatisfy(tokenCharacters.contains)) {
            findings.append("isHTTPToken disagrees with RFC 9110")
        }
        return findings
    }

    // MARK: - Token file

    /// The contents of a token file: read as a token, as corrupt, or as a newer format, never a
    /// crash; what reads as a token is written back to a file that reads as the same token.
    static func storedFormat(_ data: Data) -> [String] {
        let version = StoredAuthenticationFormat.formatVersion(of: data)
        switch StoredAuthenticationFormat.decode(OAuth2Token.self, from: data) {
        case .corrupt:
            return []
        case .futureVersion(let found):
            return found == version && found > StoredAuthenticationFormat.currentVersion
                ? [] : ["a newer format read as version \(found)"]
        case .value(let token):
            guard let version, version <= StoredAuthenticationFormat.currentVersion else {
                return ["a token read from a file of version \(String(describing: version))"]
            }
            guard let written = try? StoredAuthenticationFormat.encode(token) else {
                return ["a token read from a file cannot be written back"]
            }
            guard case .value(let again) = StoredAuthenticationFormat.decode(OAuth2Token.self, from: written) else {
                return ["a token written back does not read"]
            }
            return again == token ? [] : ["a token written back reads differently"]
        }
    }
}
