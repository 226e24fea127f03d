import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an access token is written into a request: which header, and what precedes the token.
///
/// Signing always *replaces* the header, whatever the case of an existing one
/// (`authorization`, `AUTHORIZATION`, …); it never adds a second value.
///
/// ```swift
/// .bearer                                      // Authorization: Bearer <token>   (the default)
/// .basic                                       // Authorization: Basic <token>
/// try AuthorizationScheme(scheme: "Token")     // Authorization: Token <token>
/// try AuthorizationScheme(headerName: "X-API-Key")  // X-API-Key: <token>
/// ```
public struct AuthorizationScheme: Sendable, Equatable {
    /// The header that carries the token, for example `Authorization`.
    public let headerName: String

    /// What precedes the token in the header value, including the space (`"Bearer "`), or `""`.
    public let valuePrefix: String

    /// `Authorization: Bearer <token>` (RFC 6750).
    public static let bearer = AuthorizationScheme(checkedHeaderName: "Authorization", valuePrefix: "Bearer ")

    /// `Authorization: Basic <token>`, for APIs whose "token" is already `base64(user:password)`.
    public static let basic = AuthorizationScheme(checkedHeaderName: "Authorization", valuePrefix: "Basic ")

    /// `Authorization: <scheme> <token>`, for APIs with their own scheme name (`Token`, `DPoP`, …).
    ///
    /// - Throws: ``RefreshQueueError/invalidConfiguration(_:)`` when `scheme` is not an HTTP token
    ///   (letters, digits, the backtick and `!#$%&'*+-.^_|~`).
    public init(scheme: String) throws {
        guard Self.isHTTPToken(scheme) else {
            throw RefreshQueueError.invalidConfiguration("the scheme must be an HTTP token, such as Bearer")
        }
        self.init(checkedHeaderName: "Authorization", valuePrefix: scheme + " ")
    }

    /// `<headerName>: <token>`, the bare token in a header of its own (API-key style).
    ///
    /// - Throws: ``RefreshQueueError/invalidConfiguration(_:)`` when `headerName` is not a valid
    ///   HTTP header name.
    public init(headerName: String) throws {
        guard Self.isHTTPToken(headerName) else {
            throw RefreshQueueError.invalidConfiguration("the header name must be an HTTP token, such as X-API-Key")
        }
        self.init(checkedHeaderName: headerName, valuePrefix: "")
    }

    private init(checkedHeaderName: String, valuePrefix: String) {
        self.headerName = checkedHeaderName
        self.valuePrefix = valuePrefix
    }

    /// The complete header value for `token`.
    ///
    /// - Throws: ``RefreshQueueError/invalidToken`` when the token is empty or has a character that
    ///   could end the header or smuggle another one (CR, LF, NUL, any control character, anything
    ///   outside printable ASCII, or a leading or trailing space; a space inside is allowed).
    public func headerValue(for token: String) throws(RefreshQueueError) -> String {
        guard Self.isUsableToken(token) else { throw .invalidToken }
        return valuePrefix + token
    }

    /// Writes `value` into `request`'s header, replacing any existing value in any letter case.
    ///
    /// Other headers are left as they are. This merges through `allHTTPHeaderFields`, which on
    /// Linux costs about half as much as `setValue(_:forHTTPHeaderField:)`.
    func sign(_ request: inout URLRequest, with value: String) {
        guard var fields = request.allHTTPHeaderFields, !fields.isEmpty else {
            request.allHTTPHeaderFields = [headerName: value]
            return
        }
        // The length comparison inside `equalIgnoringASCIICase` settles almost every key at once;
        // `!=` on two different strings would first call into the standard library.
        for key in fields.keys where Self.equalIgnoringASCIICase(key, headerName) && key != headerName {
            fields[key] = nil
        }
        fields[headerName] = value
        request.allHTTPHeaderFields = fields
    }

    // MARK: - Validation

    /// Printable ASCII only (0x20–0x7E), not empty, no surrounding spaces: a token cannot end the
    /// header line.
    ///
    /// Checked on Unicode scalars: in Swift `"\r\n"` is a single `Character`.
    static func isUsableToken(_ token: String) -> Bool {
        var scalars = token.unicodeScalars.makeIterator()
        guard let first = scalars.next(), first != " " else { return false }
        var last = first
        var current: Unicode.Scalar? = first
        while let scalar = current {
            guard scalar.value >= 0x20, scalar.value < 0x7F else { return false }
            last = scalar
            current = scalars.next()
        }
        return last != " "
    }

    /// RFC 9110 `token`: the characters allowed in header names and scheme names.
    static func isHTTPToken(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        return text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9":
                return true
            case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~":
                return true
            default:
                return false
            }
        }
    }

    private static func equalIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { left, right in
            left == right || (left | 0x20 == right | 0x20 && (left | 0x20) >= 0x61 && (left | 0x20) <= 0x7A)
        }
    }
}
