import Foundation

/// An OAuth 2.0 access token as the token endpoint issued it (RFC 6749 §5.1), with the moment it
/// expires computed when it was received.
///
/// `Codable` for persistence. Its `description` and `debugDescription` never show the access or
/// refresh token, so it is safe to print or log.
public struct OAuth2Token: Sendable, Equatable {
    /// The access token that signs requests.
    public var accessToken: String
    /// The token type as the server spelled it; compare it with ``isBearer``, which ignores case.
    public var tokenType: String
    /// The refresh token, when the server issued one.
    public var refreshToken: String?
    /// The scope the server granted, when it said.
    public var scope: String?
    /// When the token was issued. ``TokenEndpointClient`` sets it to when the token's request
    /// was sent (the server issued it later, so the token never looks fresher than it is). Kept
    /// to about a microsecond, so that a token read back from a store is `==` to the one saved.
    public var issuedAt: Date {
        didSet { issuedAt = issuedAt.exactlyStorable }
    }
    /// When the access token expires: `issuedAt + expires_in`, or `nil` when the server did not
    /// say. A token without an expiry is refreshed only after the server rejects it (a 401). Kept
    /// to about a microsecond, like ``issuedAt``.
    public var expiresAt: Date? {
        didSet { expiresAt = expiresAt?.exactlyStorable }
    }

    /// Creates a token.
    ///
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - tokenType: The token type the server named (RFC 6749 §5.1).
    ///   - refreshToken: The refresh token, if the server issued one.
    ///   - scope: The granted scope, if the server named one.
    ///   - issuedAt: When the token was issued.
    ///   - expiresIn: Seconds from `issuedAt` until the access token expires, or `nil`.
    public init(
        accessToken: String,
        tokenType: String = "Bearer",
        refreshToken: String? = nil,
        scope: String? = nil,
        issuedAt: Date = Date(),
        expiresIn: TimeInterval? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.scope = scope
        self.issuedAt = issuedAt.exactlyStorable
        self.expiresAt = expiresIn.map { issuedAt.addingTimeInterval($0).exactlyStorable }
    }

    /// Whether the token type is `Bearer`, in any letter case (RFC 6749 §5.1).
    public var isBearer: Bool {
        tokenType.caseInsensitiveCompare("Bearer") == .orderedSame
    }

    /// How long the access token was issued for, when the server said.
    public var lifetime: TimeInterval? {
        expiresAt.map { $0.timeIntervalSince(issuedAt) }
    }

    /// Whether the access token must be refreshed before it is used at `now`.
    ///
    /// True once less than the leeway's safety margin is left before expiry (see
    /// ``TokenLeeway``): a request signed later could reach the server
    /// after expiry. Always false for a token without an expiry.
    public func isRefreshNeeded(at now: Date, leeway: TokenLeeway = .default) -> Bool {
        guard let expiresAt, let lifetime else { return false }
        // At or past expiry it is needed, even with no margin at all (a zero lifetime).
        return expiresAt.timeIntervalSince(now) <= leeway.safetySeconds(forLifetime: lifetime)
    }

    /// Whether a refresh ahead should start at `now`: less than the leeway is left (see
    /// ``TokenLeeway``). Also true once the token has expired, when ``isRefreshNeeded(at:leeway:)``
    /// is true as well and decides. Always false for a token without an expiry.
    public func isRefreshRecommended(at now: Date, leeway: TokenLeeway = .default) -> Bool {
        guard let expiresAt, let lifetime else { return false }
        return expiresAt.timeIntervalSince(now) < leeway.seconds(forLifetime: lifetime)
    }
}

extension OAuth2Token: Codable {
    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case refreshToken = "refresh_token"
        case scope
        case issuedAt = "issued_at"
        case expiresAt = "expires_at"
    }

    /// Decodes a token; its dates are kept to about a microsecond, like those of a new token.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decode(String.self, forKey: .tokenType)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        issuedAt = try container.decode(Date.self, forKey: .issuedAt).exactlyStorable
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)?.exactlyStorable
    }
}

extension OAuth2Token: CustomStringConvertible, CustomDebugStringConvertible {
    /// A summary without the tokens: type, expiry, whether a refresh token is present, scope.
    public var description: String {
        var parts = ["type \(tokenType)"]
        if let expiresAt {
            parts.append("expires \(Self.format(expiresAt))")
        } else {
            parts.append("no expiry")
        }
        parts.append(refreshToken == nil ? "no refresh token" : "refresh token present")
        if let scope { parts.append("scope \"\(scope)\"") }
        return "OAuth2Token(\(parts.joined(separator: ", ")); access token redacted)"
    }

    /// The same as ``description``: the tokens are redacted in debug output too.
    public var debugDescription: String { description }

    private static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }
}

/// How early before expiry an ``OAuth2Token`` is refreshed: ahead of time in the background, and
/// at the latest before requests must wait.
///
/// **Refresh ahead** starts when less than **60 seconds or 10 % of the lifetime, whichever is
/// longer,** is left — but never earlier than **half** the lifetime. Requests are still signed at
/// once meanwhile. Sixty seconds cover clock skew between device and server and a slow request in
/// flight (AppAuth uses 60 s too); 10 % scales that for long-lived tokens; the cap at half keeps
/// short-lived tokens (seconds, in tests and some APIs) usable instead of stale on arrival.
///
/// **Requests wait** for a refresh only inside the **safety margin**: the last 10 seconds, or the
/// last 10 % of the lifetime when that is shorter (never more than the leeway itself). A token
/// signed with less left could reach the server after it expired. With refresh ahead working,
/// the margin is never reached.
///
/// | lifetime | refresh ahead from | requests wait from |
/// |---|---|---|
/// | 1 hour | 6 minutes left | 10 s left |
/// | 10 minutes | 60 s left | 10 s left |
/// | 60 s | 30 s left | 6 s left |
/// | 1 s | 0.5 s left | 0.1 s left |
public struct TokenLeeway: Sendable, Equatable {
    /// The shortest leeway, in seconds, unless ``maximumFractionOfLifetime`` of the lifetime is
    /// shorter still: a 60-second token's default leeway is 30 s.
    public var minimum: TimeInterval {
        didSet { requireNonNegativeSeconds(minimum, "TokenLeeway.minimum") }
    }
    /// The leeway as a fraction of the lifetime, when that is longer than ``minimum``.
    public var fractionOfLifetime: Double {
        didSet { Self.require(fraction: fractionOfLifetime, "TokenLeeway.fractionOfLifetime") }
    }
    /// The longest leeway as a fraction of the lifetime.
    public var maximumFractionOfLifetime: Double {
        didSet { Self.require(fraction: maximumFractionOfLifetime, "TokenLeeway.maximumFractionOfLifetime") }
    }
    /// The longest safety margin, in seconds: requests wait for a refresh once less is left. It
    /// is never more than 10 % of the lifetime, nor more than the leeway.
    public var safetyMargin: TimeInterval {
        didSet { requireNonNegativeSeconds(safetyMargin, "TokenLeeway.safetyMargin") }
    }

    /// Refresh ahead from max(60 s, 10 % of the lifetime), at most half the lifetime; requests
    /// wait only within min(10 s, 10 % of the lifetime) of expiry.
    public static let `default` = TokenLeeway(minimum: 60, fractionOfLifetime: 0.1, maximumFractionOfLifetime: 0.5)

    /// The safety margin's share of the lifetime, at most.
    static let maximumSafetyFraction = 0.1

    /// Creates a leeway. The fractions must lie in 0...1 and the durations be finite and zero or
    /// more, here and when a property is set later; other values stop the program (see
    /// <doc:Errors#Invalid-configuration>).
    public init(
        minimum: TimeInterval, fractionOfLifetime: Double, maximumFractionOfLifetime: Double,
        safetyMargin: TimeInterval = 10
    ) {
        requireNonNegativeSeconds(minimum, "TokenLeeway.minimum")
        Self.require(fraction: fractionOfLifetime, "TokenLeeway.fractionOfLifetime")
        Self.require(fraction: maximumFractionOfLifetime, "TokenLeeway.maximumFractionOfLifetime")
        requireNonNegativeSeconds(safetyMargin, "TokenLeeway.safetyMargin")
        self.minimum = minimum
        self.fractionOfLifetime = fractionOfLifetime
        self.maximumFractionOfLifetime = maximumFractionOfLifetime
        self.safetyMargin = safetyMargin
    }

    private static func require(fraction: Double, _ option: String) {
        requireValidConfiguration((0...1).contains(fraction), option, mustBe: "within 0...1", given: "\(fraction)")
    }

    /// The leeway for a token issued for `lifetime` seconds: a refresh ahead starts once less
    /// than this is left.
    func seconds(forLifetime lifetime: TimeInterval) -> TimeInterval {
        let wanted = max(minimum, fractionOfLifetime * lifetime)
        return min(wanted, maximumFractionOfLifetime * max(0, lifetime))
    }

    /// The safety margin for a token issued for `lifetime` seconds: requests wait for a refresh
    /// once less than this is left.
    func safetySeconds(forLifetime lifetime: TimeInterval) -> TimeInterval {
        min(safetyMargin, Self.maximumSafetyFraction * max(0, lifetime), seconds(forLifetime: lifetime))
    }
}

extension OAuth2Token: CustomReflectable {
    /// What `dump` and debuggers show: every field but the tokens themselves.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": "redacted",
                "tokenType": tokenType,
                "refreshToken": refreshToken == nil ? "none" : "redacted",
                "scope": scope as Any,
                "issuedAt": issuedAt,
                "expiresAt": expiresAt as Any,
            ],
            displayStyle: .struct)
    }
}
