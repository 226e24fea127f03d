import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("OAuth 2.0 token model", .timeLimit(.minutes(2)))
struct OAuth2TokenTests {
    let received = Date(timeIntervalSince1970: 1_000_000)

    private func parse(_ json: String, previous: OAuth2Token? = nil) throws -> OAuth2Token {
        try TokenResponse.token(from: Data(json.utf8), issuedAt: received, previous: previous)
    }

    @Test func aTokenResponseIsReadAndItsExpiryComputedAtReceipt() throws {
        let token = try parse(
            #"{"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt","scope":"a b","extra":{"x":1}}"#
        )
        #expect(token.accessToken == "at")
        #expect(token.isBearer)
        #expect(token.refreshToken == "rt")
        #expect(token.scope == "a b")
        #expect(token.expiresAt == received.addingTimeInterval(3600))
    }

    /// RFC 6749 §6: without a new refresh token the old one stays; an empty one is none.
    @Test(arguments: [#","refresh_token":"""#, "", #","refresh_token":null"#, #","refresh_token":"rt-new""#])
    func anEmptyOrMissingRefreshTokenKeepsThePreviousOne(field: String) throws {
        let previous = OAuth2Token(accessToken: "old", refreshToken: "rt-old")
        let token = try parse(#"{"access_token":"new","token_type":"Bearer"\#(field)}"#, previous: previous)
        #expect(token.refreshToken == (field.contains("rt-new") ? "rt-new" : "rt-old"))
    }

    @Test func expiresInMayBeAStringOrAbsent() throws {
        #expect(try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"60"}"#).lifetime == 60)
        let forever = try parse(#"{"access_token":"a","token_type":"Bearer"}"#)
        #expect(forever.expiresAt == nil)
        #expect(!forever.isRefreshNeeded(at: received.addingTimeInterval(1e9)))
    }

    @Test(arguments: [
        #"{"token_type":"Bearer"}"#, #"{"access_token":"","token_type":"Bearer"}"#, #"{"access_token":"a"}"#,
        "not json", "[]",
    ])
    func aResponseWithoutAccessTokenOrTokenTypeIsMalformed(json: String) {
        #expect {
            try parse(json)
        } throws: { error in
            if case OAuth2Error.malformedResponse = error { return true }
            return false
        }
    }

    @Test func aMissingRefreshTokenKeepsTheOldOneAndANewOneReplacesIt() throws {
        let old = OAuth2Token(accessToken: "old", refreshToken: "keep-me", scope: "s", issuedAt: received, expiresIn: 1)
        let kept = try parse(#"{"access_token":"new","token_type":"Bearer","expires_in":60}"#, previous: old)
        #expect(kept.refreshToken == "keep-me")
        #expect(kept.scope == "s")
        let rotated = try parse(
            #"{"access_token":"new","token_type":"Bearer","expires_in":60,"refresh_token":"rotated"}"#, previous: old)
        #expect(rotated.refreshToken == "rotated")
    }

    @Test(arguments: ["true", "false"])
    func aBooleanExpiresInIsMalformedWhileZeroAndOneAreSeconds(flag: String) throws {
        #expect {
            try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":\#(flag)}"#)
        } throws: { error in
            guard case OAuth2Error.malformedResponse = error else { return false }
            return true
        }
        #expect(try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":1}"#).lifetime == 1)
        #expect(try parse(#"{"access_token":"a","token_type":"Bearer","expires_in":0}"#).lifetime == 0)
    }

    @Test(arguments: [(3600.0, 360.0), (600.0, 60.0), (100.0, 50.0), (1.0, 0.5), (0.3, 0.15)])
    func refreshAheadIsRecommendedWithinTheLongerOfAMinuteAndATenthCappedAtHalfTheLifetime(
        lifetime: Double, leeway: Double
    ) {
        #expect(abs(TokenLeeway.default.seconds(forLifetime: lifetime) - leeway) < 1e-9)
        let token = OAuth2Token(accessToken: "a", issuedAt: received, expiresIn: lifetime)
        #expect(!token.isRefreshRecommended(at: received.addingTimeInterval(lifetime - leeway - 0.001)))
        #expect(token.isRefreshRecommended(at: received.addingTimeInterval(lifetime - leeway + 0.001)))
    }

    @Test(arguments: [(3600.0, 10.0), (600.0, 10.0), (60.0, 6.0), (1.0, 0.1), (0.3, 0.03)])
    func requestsWaitOnlyWithinTheSafetyMarginOfTenSecondsOrATenthOfTheLifetime(lifetime: Double, margin: Double) {
        #expect(abs(TokenLeeway.default.safetySeconds(forLifetime: lifetime) - margin) < 1e-9)
        let token = OAuth2Token(accessToken: "a", issuedAt: received, expiresIn: lifetime)
        let justOutside = received.addingTimeInterval(lifetime - margin - 0.001)
        #expect(!token.isRefreshNeeded(at: justOutside))
        #expect(token.isRefreshRecommended(at: justOutside))
        #expect(token.isRefreshNeeded(at: received.addingTimeInterval(lifetime - margin + 0.001)))
    }

    @Test func aTokenWithoutExpiryIsNeitherRecommendedNorNeededAndTheMarginNeverExceedsTheLeeway() {
        let forever = OAuth2Token(accessToken: "a", issuedAt: received)
        #expect(!forever.isRefreshRecommended(at: received.addingTimeInterval(1e9)))
        #expect(!forever.isRefreshNeeded(at: received.addingTimeInterval(1e9)))
        let tight = TokenLeeway(minimum: 2, fractionOfLifetime: 0, maximumFractionOfLifetime: 1, safetyMargin: 30)
        #expect(tight.safetySeconds(forLifetime: 3600) == 2)
    }

    @Test func descriptionsNeverShowTheTokens() throws {
        let token = OAuth2Token(accessToken: "secret-access", refreshToken: "secret-refresh", scope: "s", expiresIn: 60)
        for text in [token.description, token.debugDescription, String(describing: token), String(reflecting: token)] {
            #expect(!text.contains("secret"))
        }
        let client = TokenEndpointClient(
            tokenURL: URL(string: "https://example.test/token")!, clientID: "id", clientSecret: "secret-client")
        #expect(!String(describing: client).contains("secret-client"))
        #expect(!String(reflecting: client).contains("secret-client"))
    }

    @Test func dumpAndMirrorsNeverShowTokensSecretsOrCredentialsInTheURL() throws {
        let token = OAuth2Token(accessToken: "hidden-access", refreshToken: "hidden-refresh", scope: "s", expiresIn: 60)
        var dumped = ""
        dump(token, to: &dumped)
        #expect(!dumped.contains("hidden"))
        #expect(dumped.contains("scope"))

        let client = TokenEndpointClient(
            tokenURL: try #require(URL(string: "https://user:hidden-password@example.test/token?key=hidden-key")),
            clientID: "id", clientSecret: "hidden-client", additionalParameters: ["audience": "hidden-audience"])
        var dumpedClient = ""
        dump(client, to: &dumpedClient)
        dump(OAuth2Authentication(token: token, client: client), to: &dumpedClient)
        for text in [dumpedClient, client.description, client.debugDescription] {
            #expect(!text.contains("hidden"))
        }
        #expect(client.description.contains("https://example.test/token"))
        #expect(dumpedClient.contains("audience"))
    }

    @Test func aTokenRoundTripsThroughCodable() throws {
        let token = OAuth2Token(
            accessToken: "a", tokenType: "Bearer", refreshToken: "r", scope: "s", issuedAt: received, expiresIn: 12.5)
        let decoded = try JSONDecoder().decode(OAuth2Token.self, from: try JSONEncoder().encode(token))
        #expect(decoded == token)
    }
}

@Suite("OAuth 2.0 token endpoint errors", .timeLimit(.minutes(2)))
struct OAuth2ErrorTests {
    private func error(_ status: Int, _ body: String, headers: [String: String] = [:], secrets: [String] = [])
        -> OAuth2Error
    {
        tokenEndpointError(status, body, headers: headers, secrets: secrets)
    }

    @Test(arguments: [
        ("invalid_request", TokenErrorCode.invalidRequest), ("invalid_client", .invalidClient),
        ("invalid_grant", .invalidGrant), ("unauthorized_client", .unauthorizedClient),
        ("unsupported_grant_type", .unsupportedGrantType), ("invalid_scope", .invalidScope),
        ("slow_down", .other("slow_down")),
    ])
    func everyRFC6749ErrorCodeIsParsedAndUnknownOnesAreKeptVerbatim(wire: String, code: TokenErrorCode) {
        let parsed = error(400, #"{"error":"\#(wire)","error_description":"why","error_uri":"https://example.test/e"}"#)
        guard case .tokenEndpoint(let endpointError) = parsed else {
            Issue.record("expected tokenEndpoint, got \(parsed)")
            return
        }
        #expect(endpointError.code == code)
        #expect(endpointError.code.rawValue == wire)
        #expect(endpointError.errorDescription == "why")
        #expect(endpointError.errorURI?.absoluteString == "https://example.test/e")
        #expect(parsed.requiresReauthentication == (code == .invalidGrant))
    }

    @Test(arguments: [100, 0, 301, 302, 303, 304, 307, 308, 500, 503])
    func onlyA4xxAnswerIsReadAsAnRFC6749ErrorWhateverTheBodyOfAnyOtherSays(status: Int) {
        // A redirect (never followed) saying `invalid_grant` must not end the user's session.
        let parsed = error(status, #"{"error":"invalid_grant","error_description":"gone"}"#)
        guard case .server(status, _) = parsed else {
            Issue.record("HTTP \(status) read as \(parsed)")
            return
        }
        #expect(!parsed.requiresReauthentication)
    }

    @Test func aServerErrorCarriesRetryAfterInSecondsOrAsADate() {
        guard case .server(503, let seconds?) = error(503, "busy", headers: ["Retry-After": "120"]) else {
            Issue.record("expected 503 with Retry-After")
            return
        }
        #expect(seconds == 120)
        let date = Date().addingTimeInterval(600)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard case .server(503, let later?) = error(503, "", headers: ["Retry-After": formatter.string(from: date)])
        else {
            Issue.record("expected 503 with an HTTP-date Retry-After")
            return
        }
        #expect(later > 590 && later <= 600)
        guard case .server(500, nil) = error(500, "<html>oops</html>") else {
            Issue.record("expected 500 without Retry-After")
            return
        }
    }

    @Test func anErrorDescriptionThatEchoesASecretIsRedacted() {
        let parsed = error(
            400, #"{"error":"invalid_grant","error_description":"refresh token rt-12345 was revoked"}"#,
            secrets: ["rt-12345"])
        #expect(!parsed.description.contains("rt-12345"))
        #expect(parsed.description.contains("log in again"))
        #expect(!RefreshQueueError.refreshFailed(parsed).description.contains("rt-12345"))
        #expect(RefreshQueueError.refreshFailed(parsed).requiresReauthentication)
    }

    @Test func anErrorCodeThatEchoesASecretIsRedactedToo() {
        let parsed = error(400, #"{"error":"rt-12345"}"#, secrets: ["rt-12345"])
        #expect(!parsed.description.contains("rt-12345"))
        #expect(!RefreshQueueError.refreshFailed(parsed).description.contains("rt-12345"))
    }

    @Test func formEncodingEscapesEverythingButUnreservedCharacters() {
        #expect(FormURLEncoding.encode([("a b", "c&d=e+f%"), ("ü", "~")]) == "a+b=c%26d%3De%2Bf%25&%C3%BC=%7E")
    }
}

@Suite("OAuth 2.0 against a hostile token endpoint", .timeLimit(.minutes(2)))
struct HostileTokenEndpointTests {
    private let received = Date(timeIntervalSince1970: 1_700_000_000)

    private func error(_ status: Int, _ body: String, headers: [String: String] = [:], secrets: [String] = [])
        -> OAuth2Error
    {
        tokenEndpointError(status, body, headers: headers, secrets: secrets)
    }

    /// A token endpoint that never answers: the built-in client ends its request at nine tenths of
    /// `abandonAfter`, whatever its own `requestTimeout`, so the waiting request gets the
    /// transport timeout before the closure would give the refresh up (and time its waiter out).
    /// The token request of a refresh ends at nine tenths of the refresh's budget, whatever the
    /// client's own `requestTimeout`: here the budget started long ago, so that moment is near.
    @Test func aHungRefreshRequestEndsBeforeTheClosureWouldAbandonTheRefresh() async throws {
        let server = try LoopbackServer { _ in .hang }
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123",
            requestTimeout: 60)
        let authentication = OAuth2Authentication(
            token: OAuth2Token(accessToken: "stale", refreshToken: "rt-0123", expiresIn: 0), client: client)
        // Abandoned 1.5 s from now; the token request must end 0.5 s from now.
        let now = DispatchTime.now().uptimeNanoseconds
        try #require(now > 8_500_000_000, "the machine has been up for less than the budget's start")
        let budget = RefreshBudget(abandonAfter: 10, startedAt: DispatchTime(uptimeNanoseconds: now - 8_500_000_000))
        let refresh = try #require(authentication.refresh(within: budget) as? Future<OAuth2Authentication>)
        await #expect {
            try await refresh.timeout(after: 30).value
        } throws: { error in
            guard case OAuth2Error.transport(let underlying) = error else { return false }
            return underlying.code == .timedOut
        }
    }

    /// An answer is believed only from the token endpoint itself: its scheme, host (in any letter
    /// case), port and path. An answer without a URL is the request's own.
    @Test(
        arguments: [
            ("https://auth.example.test:8443/api/token", true), ("HTTPS://Auth.Example.Test:8443/api/token", true),
            ("http://auth.example.test:8443/api/token", false), ("https://auth.example.test/api/token", false),
            ("https://auth.example.test:8444/api/token", false), ("https://other.example.test:8443/api/token", false),
            ("https://auth.example.test:8443/api/Token", false), ("https://auth.example.test:8443/api", false),
            (nil, true),
        ] as [(String?, Bool)])
    func anAnswerIsBelievedOnlyFromTheTokenEndpoint(answeredFrom: String?, isBelieved: Bool) {
        let tokenURL = URL(string: "https://auth.example.test:8443/api/token")!
        #expect(TokenEndpointClient.isSameEndpoint(answeredFrom.flatMap(URL.init(string:)), as: tokenURL) == isBelieved)
    }

    /// A token request whose task is cancelled ends at once with `CancellationError`, not at its
    /// timeout and not as a transport failure.
    @Test func aCancelledTokenRequestEndsAtOnceWithCancellationError() async throws {
        let server = try LoopbackServer { _ in .hang }
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", requestTimeout: 60)
        let refresh = Task {
            try await client.refresh(OAuth2Token(accessToken: "stale", refreshToken: "rt-0123", expiresIn: 0))
        }
        // Cancelled in flight: once the server has the request.
        while server.requests.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        refresh.cancel()
        do {
            _ = try await Future(operation: { try await refresh.value }).timeout(after: 30).value
            Issue.record("a cancelled token request succeeded")
        } catch {
            #expect(error is CancellationError, "\(error)")
        }
    }

    /// What bounds the token request: the closure hands each refresh a budget of `abandonAfter`
    /// that starts when the refresh does.
    @Test(arguments: [8.0, 45])
    func aRefreshIsHandedTheClosuresAbandonLimitFromItsStart(abandonAfter: Double) async throws {
        let handed = Protected<RefreshBudget?>(nil)
        let store = InMemoryAuthenticationStore(BudgetRecording(handed: handed))
        let closure = RefreshingRequestClosure(
            store: store, options: .init(refreshTimeout: 5, abandonAfter: abandonAfter))
        let before = DispatchTime.now()
        _ = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.test/v1/me")!))
        let after = DispatchTime.now()
        let budget = try #require(handed.current)
        #expect(budget.abandonAfter == abandonAfter)
        #expect(budget.startedAt >= before && budget.startedAt <= after)
    }

    @Test(arguments: [
        "9223372036854775807", "99999999999999999999999999999999999999999999", "18446744073709551616",
        "Fri, 31 Dec 9999 23:59:59 GMT", "86401",
    ])
    func aHugeRetryAfterIsClampedToADayAndNeverCrashes(value: String) {
        let parsed = error(503, "", headers: ["Retry-After": value])
        guard case .server(503, let seconds?) = parsed else {
            Issue.record("expected a clamped Retry-After, got \(parsed)")
            return
        }
        #expect(seconds == 86_400)
        #expect(parsed.description.contains("86400 s"))
        #expect(RefreshQueueError.refreshFailed(parsed).description.contains("86400 s"))
        #expect(
            RefreshEvent.refreshFailed(.refreshFailed(parsed), duration: 1e300).description.contains("refresh failed"))
    }

    @Test(arguments: ["-5", "1e9", "soon", "", "Thu, 01 Jan 1970 00:00:00 GMT", String(repeating: "9x", count: 500)])
    func aRetryAfterThatIsNotADelayOrAFutureDateMeansNoWait(value: String) {
        let parsed = error(503, "", headers: ["Retry-After": value])
        guard case .server(503, let seconds) = parsed else {
            Issue.record("expected a 503, got \(parsed)")
            return
        }
        #expect(seconds == nil || seconds == 0)
        _ = parsed.description
    }

    @Test func anErrorEchoingTheClientCredentialsInAnyEncodingIsRedactedInEveryField() {
        let secret = "s3cr3t/client+secret="
        let refreshToken = "rt/with+special=chars"
        let basic = Data("client-id:\(FormURLEncoding.escape(secret))".utf8).base64EncodedString()
        let percent = refreshToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let body = """
            {"error":"invalid_client \(secret)","error_description":"got Basic \(basic) and \
            \(FormURLEncoding.escape(refreshToken)) and \(percent)","error_uri":"https://example.test/e?t=\(percent)&r=\(refreshToken)"}
            """
        let parsed = error(401, body, secrets: [refreshToken, secret, basic])
        guard case .tokenEndpoint(let endpointError) = parsed else {
            Issue.record("expected tokenEndpoint, got \(parsed)")
            return
        }
        var dumped = ""
        dump(parsed, to: &dumped)
        for text in [
            parsed.description, String(reflecting: parsed), dumped, endpointError.code.rawValue,
            endpointError.errorDescription ?? "", endpointError.errorURI?.absoluteString ?? "",
        ] {
            for form in [secret, refreshToken, basic, percent, FormURLEncoding.escape(refreshToken)] {
                #expect(!text.contains(form), "\(form) in \(text)")
            }
        }
    }

    @Test(arguments: [
        "rt%2fwith%2bslash%3d%3D~tail x", "rt%2Fwith%2Bslash==%7etail+x", "rt/with%2bslash=%3d~tail%20x",
    ])
    func aSecretEchoedWithLowercaseHexOrOnlyPartlyEscapedIsRedacted(echo: String) {
        let refreshToken = "rt/with+slash==~tail x"
        let body = #"{"error":"invalid_grant","error_description":"bad token \#(echo)!"}"#
        let parsed = error(400, body, secrets: [refreshToken])
        guard case .tokenEndpoint(let endpointError) = parsed else {
            Issue.record("expected tokenEndpoint, got \(parsed)")
            return
        }
        #expect(endpointError.errorDescription == "bad token [redacted]!")
    }

    /// A secret echoed with a character that shows nothing inside it (a NUL, a DEL, a zero-width
    /// space) was not found, and reached the error whole to anyone reading the log; a line break
    /// in `error_description` started a new line in it.
    @Test func anErrorEchoingASecretSplitByAnInvisibleCharacterIsRedacted() {
        let body =
            #"{"error":"invalid_grant","error_description":"bad rt-12\u0000345, rt-1\u007f2345, rt-\u200b12345\nX: 1"}"#
        let parsed = error(400, body, secrets: ["rt-12345"])
        guard case .tokenEndpoint(let endpointError) = parsed else {
            Issue.record("expected tokenEndpoint, got \(parsed)")
            return
        }
        #expect(endpointError.errorDescription == "bad [redacted], [redacted], [redacted]X: 1")
        #expect(!"\(parsed)".contains("345"))
    }

    /// A percent-encoded secret that ends the text: its last escape is the text's last three bytes.
    @Test(arguments: ["bad token rt-1234%3D", "bad token rt-1234%3d", "rt-1234%3D", "x rt-1234="])
    func aSecretThatEndsTheTextPercentEncodedIsRedacted(text: String) {
        let redaction = SecretRedaction(secrets: ["rt-1234="])
        #expect(!redaction.redact(text).contains("rt-1234"))
        #expect(redaction.redact(text).hasSuffix("[redacted]"))
    }

    /// The limit is 4 characters: a secret of 4 is redacted in every form, one of 3 is left alone
    /// (it would mangle ordinary text without protecting anything).
    @Test func aSecretOfFourCharactersIsRedactedAndOneOfThreeIsNot() {
        let four = SecretRedaction(secrets: ["k3y9"])
        #expect(four.redact("bad k3y9 and azN5OQ== there") == "bad [redacted] and [redacted] there")
        let three = SecretRedaction(secrets: ["k3y"])
        #expect(three.redact("bad k3y there") == "bad k3y there")
    }

    @Test func textWithoutASecretIsKeptByteForByte() {
        let redaction = SecretRedaction(secrets: ["rt-12345", "s3cret value"])
        for text in ["", "%", "100 %", "rt-1234", "%7", "rt-1234%3", "é – 日本 🔑 rt-1234€"] {
            #expect(redaction.redact(text) == text)
        }
        #expect(redaction.redact("s3cret+valu%65 🔑") == "[redacted] 🔑")
        #expect(redaction.redact("é rt-12345é") == "é [redacted]é")
    }

    @Test func aLongSecretEchoedAsTheTokenTypeLeavesNoneOfItInTheError() {
        let refreshToken = "RT-" + String(repeating: "abcdefghij", count: 6)
        let basic = Data("client:\(refreshToken)".utf8).base64EncodedString()
        for echoed in [refreshToken, "Basic " + basic, "x\\u0000" + refreshToken] {
            #expect {
                try TokenResponse.token(
                    from: Data(#"{"access_token":"at","token_type":"\#(echoed)"}"#.utf8), issuedAt: received,
                    previous: nil, secrets: [refreshToken, basic])
            } throws: { error in
                guard case OAuth2Error.unsupportedTokenType(let type) = error else { return false }
                return !type.contains("abcdefgh") && !type.contains(String(basic.prefix(8)))
                    && !error.localizedDescription.contains("abcdefgh")
            }
        }
    }

    /// "Neither tokens nor the client secret ever appear in … an error": also not the tokens the
    /// refused answer itself issued, should the server write one into `token_type`. They were
    /// shown whole; so was a sent secret with a space in it, once the space was dropped.
    @Test func aTokenTypeThatHoldsTheAnswersOwnTokensShowsNeither() {
        let access = "AT9f3kQ2xV7pL0sN4mB8cR1tY6wE5uZ"
        let refresh = "RT-new é 0123456789"
        for type in ["Bearer \(access)", "Bearer \(refresh)", "Bearer rt-old value"] {
            let body = #"{"access_token":"\#(access)","refresh_token":"\#(refresh)","token_type":"\#(type)"}"#
            #expect {
                try TokenResponse.token(
                    from: Data(body.utf8), issuedAt: received, previous: nil, secrets: ["rt-old value"])
            } throws: { error in
                guard case OAuth2Error.unsupportedTokenType(let shown) = error else { return false }
                let text = "\(error) \(error.localizedDescription)"
                return shown.hasPrefix("Bearer") && !text.contains("AT9f3kQ2") && !text.contains("0123456789")
                    && !text.contains("rt-oldvalue")
            }
        }
    }

    @Test(arguments: ["DPoP", "mac", "N_A"])
    func aTokenTypeOtherThanBearerIsRefusedByName(type: String) {
        #expect {
            try TokenResponse.token(
                from: Data(#"{"access_token":"at","token_type":"\#(type)","expires_in":60}"#.utf8),
                issuedAt: received,
                previous: nil)
        } throws: { error in
            guard case OAuth2Error.unsupportedTokenType(type) = error else { return false }
            return error.localizedDescription.contains(type)
        }
    }

    @Test func aTokenTypeThatEchoesASecretIsRedactedEvenWithControlCharactersInside() {
        for echoed in ["rt-12345", "rt-12\\u007f345", "rt-\\u000012345"] {
            #expect {
                try TokenResponse.token(
                    from: Data(#"{"access_token":"at","token_type":"\#(echoed)"}"#.utf8), issuedAt: received,
                    previous: nil, secrets: ["rt-12345"])
            } throws: { error in
                guard case OAuth2Error.unsupportedTokenType(let type) = error else { return false }
                return !type.contains("rt-12345") && !error.localizedDescription.contains("rt-12345")
            }
        }
    }

    @Test func bearerInAnyCaseIsAcceptedAndAnAppMayAcceptAnotherType() throws {
        let lower = try TokenResponse.token(
            from: Data(#"{"access_token":"at","token_type":"bEaReR"}"#.utf8), issuedAt: received, previous: nil)
        #expect(lower.isBearer)
        let custom = try TokenResponse.token(
            from: Data(#"{"access_token":"at","token_type":"Token"}"#.utf8), issuedAt: received, previous: nil,
            acceptedTypes: ["Bearer", "token"])
        #expect(custom.tokenType == "Token")
    }

    @Test(arguments: [#"-1"#, #""soon""#, #""-60""#, #"1e400"#, #""nan""#, #""inf""#])
    func anExpiresInThatIsNegativeOrNotANumberIsRefused(value: String) {
        #expect(throws: OAuth2Error.self) {
            try TokenResponse.token(
                from: Data(#"{"access_token":"at","token_type":"Bearer","expires_in":\#(value)}"#.utf8),
                issuedAt: received, previous: nil)
        }
    }

    /// A lifetime up to a year is kept to the second; a second more is read as a year.
    @Test(arguments: [(31_535_999.0, 31_535_999.0), (31_536_000, 31_536_000), (31_536_001, 31_536_000)])
    func anExpiresInIsKeptUpToAYear(given: Double, kept: Double) throws {
        let token = try TokenResponse.token(
            from: Data(#"{"access_token":"at","token_type":"Bearer","expires_in":\#(Int(given))}"#.utf8),
            issuedAt: received, previous: nil)
        #expect(token.lifetime == kept)
    }

    /// An unaccepted token type is shown by its first 40 characters: all of one that long, not
    /// the 41st of a longer one.
    @Test(arguments: [40, 41])
    func anUnacceptedTokenTypeIsShownByItsFirst40Characters(length: Int) {
        let type = String(repeating: "t", count: 39) + String(repeating: "X", count: length - 39)
        #expect(throws: OAuth2Error.unsupportedTokenType(String(repeating: "t", count: 39) + "X")) {
            try TokenResponse.token(
                from: Data(#"{"access_token":"at","token_type":"\#(type)"}"#.utf8), issuedAt: received, previous: nil)
        }
    }

    @Test func anAbsurdExpiresInIsReadAsAYearAndZeroAsAlreadyExpired() throws {
        let long = try TokenResponse.token(
            from: Data(#"{"access_token":"at","token_type":"Bearer","expires_in":1e15}"#.utf8), issuedAt: received,
            previous: nil)
        #expect(abs((long.lifetime ?? 0) - 365 * 86_400) < 0.001)
        let zero = try TokenResponse.token(
            from: Data(#"{"access_token":"at","token_type":"Bearer","expires_in":0}"#.utf8), issuedAt: received,
            previous: nil)
        #expect(zero.isRefreshNeeded(at: received))
    }

    @Test(arguments: ["at\r\nX-Injected: 1", "at\n", " at", "töken", "at\u{0}"] as [EscapedText])
    func anAccessTokenThatCannotGoInAHeaderIsAMalformedResponse(token: EscapedText) throws {
        let body = try JSONSerialization.data(withJSONObject: ["access_token": token.value, "token_type": "Bearer"])
        #expect {
            try TokenResponse.token(from: body, issuedAt: received, previous: nil)
        } throws: { error in
            guard case OAuth2Error.malformedResponse = error else { return false }
            return true
        }
    }
}

/// The error `TokenEndpointClient` makes of an answer with `status`, `body` and `headers`.
func tokenEndpointError(_ status: Int, _ body: String, headers: [String: String] = [:], secrets: [String] = [])
    -> OAuth2Error
{
    let response = HTTPURLResponse(
        url: URL(string: "https://example.test/token")!, statusCode: status, httpVersion: "HTTP/1.1",
        headerFields: headers)!
    return TokenEndpointClient.error(status: status, body: Data(body.utf8), response: response, secrets: secrets)
}

@Suite("OAuth 2.0 scope on refresh", .timeLimit(.minutes(2)))
struct OAuth2ScopeTests {
    @Test func anAnswerWithoutScopeHasTheScopeTheRefreshAskedForOrElseTheOneGrantedBefore() async throws {
        // RFC 6749 §5.1: `scope` may be left out only when it is the one requested.
        let server = try LoopbackServer.issuingANewToken()
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123")
        let old = OAuth2Token(accessToken: "old", refreshToken: "rt-0123", scope: "read write admin", expiresIn: 3600)
        let narrowed = try await client.refresh(old, scope: "read")
        let sent = String(decoding: server.requests.first?.body ?? Data(), as: UTF8.self)
        #expect(sent.contains("scope=read"))
        #expect(narrowed.scope == "read")
        let kept = try await client.refresh(old)
        #expect(kept.scope == "read write admin")
    }
}

@Suite("OAuth 2.0 endpoint over the network", .timeLimit(.minutes(2)))
struct OAuth2InsecureEndpointTests {
    @Test(arguments: [
        ("http://auth.example.test/api/token", "auth.example.test"),
        ("HTTP://Auth.Example.Test:8080/api/token", "auth.example.test"),
        ("http://127.0.0.08/token", "127.0.0.08"), ("http://10.0.0.1/token", "10.0.0.1"),
        ("ftp://auth.example.test/token", "auth.example.test"), ("file:///tmp/token", ""),
        // WebSocket URLs are no token endpoints, encrypted or on this machine: refused like ftp,
        // not handed to URLSession to fail there.
        ("wss://auth.example.test/token", "auth.example.test"), ("ws://127.0.0.1:9/token", "127.0.0.1"),
    ])
    func aTokenEndpointThatIsNotHTTPSIsRefusedBeforeTheSecretsAreSent(url: String, host: String) async {
        let client = TokenEndpointClient(tokenURL: URL(string: url)!, clientID: "id", clientSecret: "secret-0123")
        let token = OAuth2Token(accessToken: "old", refreshToken: "rt-0123", expiresIn: 3600)
        await #expect(throws: OAuth2Error.self) {
            do {
                _ = try await client.refresh(token)
            } catch let error as OAuth2Error {
                guard case .insecureEndpoint(let refused) = error else {
                    Issue.record("expected insecureEndpoint, got \(error)")
                    throw error
                }
                #expect(refused.lowercased() == host)
                #expect(!error.description.contains("secret-0123") && !error.description.contains("rt-0123"))
                throw error
            }
        }
        await #expect(throws: OAuth2Error.self) {
            _ = try await client.exchange(code: "code-0123", redirectURI: "app://callback")
        }
    }

    @Test func aDevelopmentServerOnPlainHTTPIsReachedOnlyWhenTheAppSaysSo() async {
        let token = OAuth2Token(accessToken: "old", refreshToken: "rt-0123", expiresIn: 3600)
        let url = URL(string: "http://dev.invalid:8080/token")!
        let strict = TokenEndpointClient(
            tokenURL: url, clientID: "id", clientSecret: "secret-0123", requestTimeout: 5)
        await #expect {
            try await strict.refresh(token)
        } throws: { error in
            guard case OAuth2Error.insecureEndpoint("dev.invalid") = error else { return false }
            return true
        }
        var allowing = strict
        allowing.allowsPlainHTTP = true
        do {
            _ = try await allowing.refresh(token)
            Issue.record("a host under .invalid cannot answer")
        } catch OAuth2Error.transport {
            // Sent, and no such host: what a development server that is down looks like.
        } catch {
            Issue.record("expected a transport error, got \(error)")
        }
        let file = TokenEndpointClient(
            tokenURL: URL(string: "file:///tmp/token")!, clientID: "id", allowsPlainHTTP: true)
        await #expect {
            try await file.refresh(token)
        } throws: { error in
            guard case OAuth2Error.insecureEndpoint("") = error else { return false }
            return true
        }
    }

    @Test func plainHTTPToThisMachineIsAllowed() async throws {
        let server = try LoopbackServer.issuingANewToken()
        defer { server.stop() }
        for host in ["127.0.0.1", "localhost"] {
            var components = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)!
            components.host = host
            components.path = "/token"
            let client = TokenEndpointClient(tokenURL: components.url!, clientID: "id", clientSecret: "secret-0123")
            let fresh = try await client.refresh(OAuth2Token(accessToken: "old", refreshToken: "rt-0123"))
            #expect(fresh.accessToken == "new")
        }
    }

    /// On Linux, libcurl would carry the request to a proxy that `http_proxy` names, even for this
    /// machine: the client secret and refresh token would reach it unencrypted.
    @Test func plainHTTPToThisMachineThroughAProxyOnAnotherIsRefusedBeforeAnythingIsSent() async throws {
        let server = try LoopbackServer.issuingANewToken()
        defer { server.stop() }
        var client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123")
        let variables = ["http_proxy": "http://user:pass-0123@proxy.example.test:3128"]
        client.proxies = ProxyEnvironment { variables[$0] }
        let token = OAuth2Token(accessToken: "old", refreshToken: "rt-0123")
        await #expect {
            try await client.refresh(token)
        } throws: { error in
            guard case OAuth2Error.insecureEndpoint("proxy.example.test") = error else { return false }
            return !"\(error)".contains("pass-0123") && !"\(error)".contains("secret-0123")
        }
        #expect(server.requests.isEmpty)
        // Sent with plain http allowed, or when the proxy is on this machine or skips the host.
        // (This process's own environment, which URLSession reads, names no proxy.)
        var allowing = client
        allowing.allowsPlainHTTP = true
        #expect(try await allowing.refresh(token).accessToken == "new")
        for sending in [["http_proxy": "http://127.0.0.1:9"], variables.merging(["no_proxy": "127.0.0.1"]) { $1 }] {
            client.proxies = ProxyEnvironment { sending[$0] }
            #expect(try await client.refresh(token).accessToken == "new")
        }
        #expect(server.requests.count == 3)
    }
}

extension LoopbackServer {
    /// A token endpoint that answers every request with the access token `new`, for an hour.
    static func issuingANewToken() throws -> LoopbackServer {
        try LoopbackServer { _ in
            .answer(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"access_token":"new","token_type":"Bearer","expires_in":3600}"#.utf8))
        }
    }
}

/// An authentication that needs a refresh and records the budget the closure hands that refresh.
private struct BudgetRecording: RefreshableAuthentication, BudgetedRefresh {
    let handed: Protected<RefreshBudget?>
    var accessToken: String { "recorded" }
    var isRefreshNeeded: Bool { handed.current == nil }

    func refresh() -> Future<BudgetRecording> { Future(error: CancellationError()) }

    func refresh(within budget: RefreshBudget) -> any Sendable {
        handed.withLock { $0 = budget }
        return Future(value: self)
    }

    static func find() -> BudgetRecording? { nil }
}
