/// Every authorization code, refresh token and access token the stub has issued, and what each
/// one is still good for.
///
/// Tokens belong to a *family*: everything descended from one authorization code. Families are
/// what refresh-token reuse detection revokes (RFC 9700 §4.14.2): when a refresh token that was
/// already rotated away is presented, someone holds a stolen copy, and since the server cannot
/// tell the thief from the client it revokes the whole family, access tokens included.
///
/// A plain value type; `StubState` keeps it behind the stub's lock.
struct TokenRegistry {
    /// The settings in force when a grant is processed, captured from the stub's knobs.
    struct Policy {
        var accessTokenLifetime: Double
        var rotatesRefreshTokens: Bool
        var detectsRefreshTokenReuse: Bool
        var singleUseRefreshTokens = false
        /// Seconds during which a refresh token just rotated away is still accepted.
        var reuseInterval: Double = 0
    }

    /// What a successful grant hands out.
    struct Issued {
        var accessToken: String
        var lifetime: Double
        /// `nil` when the grant keeps the client's current refresh token.
        var refreshToken: String?
        var scope: String
        /// True when the refresh token presented had been rotated away, within the reuse interval.
        var withinReuseInterval = false
    }

    /// Why a grant was refused; becomes `invalid_grant` with this description (or
    /// `invalid_client`, when the client should have authenticated).
    struct GrantError: Error, Equatable {
        var description: String
        /// True when the refusal was a detected refresh-token replay.
        var isReuse = false
        /// True when a public client (no secret) asked for a grant only a confidential one may.
        var needsClientAuthentication = false
    }

    /// The state of an access token presented to the Web API.
    enum AccessTokenStatus: Equatable {
        case valid
        case expired
        /// Never issued, pruned long after expiry, or revoked with its family.
        case invalid
    }

    private struct Family {
        var clientID: String
        var scope: String
        var isRevoked = false
        /// Authorized with PKCE: a public client (no secret) may refresh it.
        var isPublic = false
        /// The one refresh token of the family that is not rotated away, if rotation issued any.
        var currentRefreshToken: String?
    }

    private struct PendingCode {
        var clientID: String
        var redirectURI: String
        var scope: String
        var expiresAt: Double
        /// The PKCE S256 code challenge of the authorization request, if it sent one.
        var codeChallenge: String?
    }

    private struct RefreshTokenRecord {
        var family: Int
        var clientID: String
        /// False once a rotation replaced it; presenting it then is a replay.
        var isCurrent: Bool
        /// When a rotation replaced it.
        var rotatedAt: Double?
    }

    private struct AccessTokenRecord {
        var family: Int
        var expiresAt: Double
    }

    /// Expired access tokens are remembered this long so clients still get "The access token
    /// expired" rather than "Invalid access token"; after that they are forgotten so that
    /// long benchmarks with short lifetimes do not grow memory without bound.
    static let expiredAccessTokenRetention: Double = 600

    private var families: [Int: Family] = [:]
    private var codes: [String: PendingCode] = [:]
    private var refreshTokens: [String: RefreshTokenRecord] = [:]
    private var accessTokens: [String: AccessTokenRecord] = [:]
    private var nextFamily = 0
    private var issuedSincePrune = 0

    // MARK: - Authorization codes

    /// Issues a single-use code bound to the client, redirect URI and scope of the consent.
    mutating func issueCode(
        clientID: String, redirectURI: String, scope: String, codeChallenge: String? = nil, lifetime: Double,
        now: Double
    ) -> String {
        let code = RandomToken.authorizationCode()
        codes[code] = PendingCode(
            clientID: clientID, redirectURI: redirectURI, scope: scope, expiresAt: now + lifetime,
            codeChallenge: codeChallenge)
        return code
    }

    /// Exchanges a code for a new token family (RFC 6749 §4.1.3). A code works once; a failed
    /// attempt (wrong redirect URI, wrong client, wrong PKCE verifier) does not consume it. A code
    /// issued with a code challenge needs the verifier whose S256 transform it is (RFC 7636 §4.6).
    mutating func redeemCode(
        _ code: String, clientID: String, redirectURI: String, codeVerifier: String?, isPublicClient: Bool = false,
        policy: Policy, now: Double
    ) -> Result<Issued, GrantError> {
        guard let pending = codes[code] else {
            return .failure(GrantError(description: "Invalid authorization code"))
        }
        guard now < pending.expiresAt else {
            codes[code] = nil
            return .failure(GrantError(description: "Authorization code expired"))
        }
        guard pending.clientID == clientID else {
            return .failure(GrantError(description: "Invalid authorization code"))
        }
        guard pending.redirectURI == redirectURI else {
            return .failure(GrantError(description: "Invalid redirect URI"))
        }
        if isPublicClient && pending.codeChallenge == nil {
            // Without a secret, only PKCE proves that this client asked for the code.
            return .failure(GrantError(description: "Client authentication required", needsClientAuthentication: true))
        }
        if let challenge = pending.codeChallenge {
            guard let codeVerifier, S256.challenge(for: codeVerifier) == challenge else {
                return .failure(GrantError(description: "code_verifier was incorrect"))
            }
        } else if codeVerifier != nil {
            // A verifier for a code issued without a challenge: the login URL lost its PKCE
            // parameters on the way: the PKCE downgrade that RFC 9700 has servers refuse.
            return .failure(GrantError(description: "code_verifier given for a code issued without code_challenge"))
        }
        codes[code] = nil
        let family = nextFamily
        nextFamily += 1
        let refreshToken = RandomToken.refreshToken()
        families[family] = Family(
            clientID: clientID, scope: pending.scope, isPublic: pending.codeChallenge != nil,
            currentRefreshToken: refreshToken)
        refreshTokens[refreshToken] = RefreshTokenRecord(family: family, clientID: clientID, isCurrent: true)
        let accessToken = issueAccessToken(family: family, lifetime: policy.accessTokenLifetime, now: now)
        return .success(
            Issued(
                accessToken: accessToken,
                lifetime: policy.accessTokenLifetime,
                refreshToken: refreshToken,
                scope: pending.scope
            )
        )
    }

    // MARK: - Refresh tokens

    /// Processes a refresh grant (RFC 6749 §6), rotating and detecting replays per `policy`. A
    /// client without a secret (`isPublicClient`) may refresh only what it got through PKCE.
    ///
    /// Within `policy.reuseInterval` of its rotation, a rotated-away refresh token is accepted as
    /// if it were current (as Auth0's reuse interval and Okta's grace period do): the family gets
    /// a new current refresh token, and the one issued by the rotation is rotated away in turn.
    mutating func refresh(
        _ token: String, clientID: String, isPublicClient: Bool = false, policy: Policy, now: Double
    ) -> Result<Issued, GrantError> {
        guard let record = refreshTokens[token], record.clientID == clientID, let family = families[record.family]
        else {
            return .failure(GrantError(description: "Invalid refresh token"))
        }
        if isPublicClient && !family.isPublic {
            return .failure(GrantError(description: "Client authentication required", needsClientAuthentication: true))
        }
        let withinReuseInterval =
            !record.isCurrent && !policy.singleUseRefreshTokens
            && record.rotatedAt.map { now - $0 < policy.reuseInterval } == true
        if !record.isCurrent && !withinReuseInterval {
            if policy.singleUseRefreshTokens {
                return .failure(GrantError(description: "Refresh token revoked", isReuse: true))
            }
            if policy.detectsRefreshTokenReuse {
                families[record.family]?.isRevoked = true
                return .failure(
                    GrantError(description: "Refresh token reuse detected; the grant was revoked", isReuse: true))
            }
            return .failure(GrantError(description: "Invalid refresh token"))
        }
        if family.isRevoked {
            return .failure(GrantError(description: "Refresh token revoked"))
        }
        var newRefreshToken: String?
        if policy.rotatesRefreshTokens {
            let replacement = RandomToken.refreshToken()
            for rotated in [token, family.currentRefreshToken].compactMap({ $0 })
            where refreshTokens[rotated]?.isCurrent == true {
                refreshTokens[rotated]?.isCurrent = false
                refreshTokens[rotated]?.rotatedAt = now
            }
            refreshTokens[replacement] = RefreshTokenRecord(family: record.family, clientID: clientID, isCurrent: true)
            families[record.family]?.currentRefreshToken = replacement
            newRefreshToken = replacement
        }
        let accessToken = issueAccessToken(family: record.family, lifetime: policy.accessTokenLifetime, now: now)
        return .success(
            Issued(
                accessToken: accessToken,
                lifetime: policy.accessTokenLifetime,
                refreshToken: newRefreshToken,
                scope: family.scope,
                withinReuseInterval: withinReuseInterval
            )
        )
    }

    // MARK: - Access tokens

    /// Whether `token` may be used for a Web API call right now.
    func status(ofAccessToken token: String, now: Double) -> AccessTokenStatus {
        guard let record = accessTokens[token], families[record.family]?.isRevoked == false else {
            return .invalid
        }
        return now < record.expiresAt ? .valid : .expired
    }

    /// Makes every access token issued so far expired, leaving refresh tokens untouched.
    mutating func expireAllAccessTokens(now: Double) {
        for (token, record) in accessTokens where record.expiresAt > now {
            accessTokens[token]?.expiresAt = now
        }
    }

    private mutating func issueAccessToken(family: Int, lifetime: Double, now: Double) -> String {
        issuedSincePrune += 1
        if issuedSincePrune >= 4096 {
            issuedSincePrune = 0
            let horizon = now - TokenRegistry.expiredAccessTokenRetention
            accessTokens = accessTokens.filter { $0.value.expiresAt > horizon }
            codes = codes.filter { $0.value.expiresAt > now }
        }
        let token = RandomToken.accessToken()
        accessTokens[token] = AccessTokenRecord(family: family, expiresAt: now + lifetime)
        return token
    }
}
