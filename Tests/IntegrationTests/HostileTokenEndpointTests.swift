import Foundation
import RefreshQueue
import TestSupport
import Testing
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built-in token client against token endpoints that try to take its secrets or its memory.
@Suite("TokenEndpointClient against hostile token endpoints", .timeLimit(.minutes(5)))
struct HostileTokenEndpointIntegrationTests {
    static let secret = "client-secret-0123456789"
    static let refreshToken = "refresh-token-0123456789"

    private func client(_ endpoint: URL, session: URLSession) -> TokenEndpointClient {
        TokenEndpointClient(
            tokenURL: endpoint, clientID: "client-id", clientSecret: Self.secret, session: session, requestTimeout: 10)
    }

    private var token: OAuth2Token {
        OAuth2Token(accessToken: "access", refreshToken: Self.refreshToken, expiresIn: 3600)
    }

    @Test(arguments: [302, 307, 308])
    func aRedirectingTokenEndpointNeverGetsTheSecretsDeliveredElsewhere(status: Int) async throws {
        // The other host would accept anything, as an attacker's would.
        let elsewhere = try LoopbackServer { _ in
            .answer(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"access_token":"attacker","token_type":"Bearer","expires_in":3600}"#.utf8))
        }
        defer { elsewhere.stop() }
        // `localhost` and another port: another origin.
        let target = "http://localhost:\(elsewhere.port)/api/token"
        // Its body claims the refresh token is dead: only a 4xx answer's body is read as a verdict,
        // so this one ends no session.
        let endpoint = try LoopbackServer { _ in
            .answer(
                status: status, headers: ["Location": target, "Content-Type": "application/json"],
                body: Data(#"{"error":"invalid_grant"}"#.utf8))
        }
        defer { endpoint.stop() }
        for session in [URLSession.shared, TokenEndpointClient.defaultSession] {
            let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: session)
            await #expect {
                _ = try await client.refresh(token)
            } throws: { error in
                guard let refused = error as? OAuth2Error, case .server(let answered, _) = refused else { return false }
                return answered == status && !refused.requiresReauthentication
            }
        }
        #expect(elsewhere.requests.isEmpty)
        #expect(endpoint.requests.count == 2)
        #expect(endpoint.requests.allSatisfy { $0.everything.contains(Self.refreshToken) })
    }

    @Test(.exclusive, .enabled(if: ResidentMemory.isAvailable))
    func aTwoHundredMegabyteAnswerEndsTooLargeWithinAFewMegabytes() async throws {
        let endpoint = try LoopbackServer { request in
            request.path.hasSuffix("warm-up")
                ? .answer(status: 500, headers: [:], body: Data()) : .huge(bytes: 200 << 20)
        }
        defer { endpoint.stop() }
        // The first transfer sets up the session and its threads: not what is measured.
        _ = try? await client(endpoint.baseURL.appendingPathComponent("warm-up"), session: .shared).refresh(token)
        let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        // Nothing of the answer is kept: the heap in use once the call has returned grows by a few
        // MiB at most (the answer would add 200). While it runs, Linux's URLSession goes on
        // delivering chunks read before the cancellation took effect: resident memory may grow by
        // some tens of MiB for a moment, more under the thread sanitizer on a busy machine (95 MiB
        // was seen), never by the whole answer. Other tests running meanwhile add noise, which
        // passes: the least of three tries counts (an answer kept would show in every try).
        var leastHeap = Int.max
        var leastResident = Int.max
        for _ in 0..<3 where leastHeap >= 8 << 20 || leastResident >= 150 << 20 {
            let heapBefore = HeapInUse.bytes()
            let residentBefore = ResidentMemory.bytes()
            await #expect {
                _ = try await client.refresh(token)
            } throws: { error in
                guard case OAuth2Error.responseTooLarge = error else { return false }
                return true
            }
            leastHeap = min(leastHeap, HeapInUse.bytes() - heapBefore)
            leastResident = min(leastResident, ResidentMemory.bytes() - residentBefore)
        }
        #if canImport(Glibc)
        #expect(leastHeap < 8 << 20, "the heap in use grew by \(leastHeap >> 20) MiB")
        #endif
        #expect(leastResident < 150 << 20, "resident memory grew by \(leastResident >> 20) MiB")
    }

    /// README: an answer announcing more than 1 MiB is refused before its body is read. Linux's
    /// URLSession ignores the `.cancel` answer to a response and would wait for the body until the
    /// request's deadline; the refusal must not wait for it.
    @Test(.exclusive) func anAnswerAnnouncingTooMuchIsRefusedWithoutWaitingForItsBody() async throws {
        let endpoint = try LoopbackServer { _ in .announceThenHang(bytes: 50 << 20) }
        defer { endpoint.stop() }
        var client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        client.requestTimeout = 60
        let start = ProcessInfo.processInfo.systemUptime
        await #expect {
            _ = try await client.refresh(token)
        } throws: { error in
            guard case OAuth2Error.responseTooLarge = error else { return false }
            return true
        }
        let elapsed = ProcessInfo.processInfo.systemUptime - start
        #expect(elapsed < 30, "the refusal took \(elapsed) s: it waited for the request's deadline")
    }

    /// README: at most 1 MiB of an answer is read. An answer of exactly that size is a token; one
    /// byte more is refused.
    @Test(arguments: [(0, true), (1, false)])
    func anAnswerOfExactlyOneMebibyteIsReadAndOneByteMoreIsNot(extra: Int, isRead: Bool) async throws {
        let json = Data(#"{"access_token":"fresh","token_type":"Bearer","expires_in":3600}"#.utf8)
        let padding = Data(repeating: UInt8(ascii: " "), count: (1 << 20) + extra - json.count)
        let endpoint = try LoopbackServer { _ in
            .answer(status: 200, headers: ["Content-Type": "application/json"], body: json + padding)
        }
        defer { endpoint.stop() }
        let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        do {
            let fresh = try await client.refresh(token)
            #expect(isRead)
            #expect(fresh.accessToken == "fresh")
        } catch OAuth2Error.responseTooLarge {
            #expect(!isRead)
        }
    }

    @Test(.exclusive) func aHugeChunkedAnswerEndsTooLargeAndIsNotKept() async throws {
        let endpoint = try LoopbackServer { _ in .hugeChunked(bytes: 200 << 20) }
        defer { endpoint.stop() }
        let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        await #expect {
            _ = try await client.refresh(token)
        } throws: { error in
            guard case OAuth2Error.responseTooLarge = error else { return false }
            return true
        }
    }

    @Test(.exclusive) func aBodyDrippedSlowerThanTheDeadlineEndsAtTheDeadline() async throws {
        let endpoint = try LoopbackServer { _ in .drip(interval: 0.05) }
        defer { endpoint.stop() }
        // The whole body would take 50 s and then be no token: only the deadline ends it as a timeout.
        var client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        client.requestTimeout = 0.5
        await #expect {
            _ = try await client.refresh(token)
        } throws: { error in
            guard case OAuth2Error.transport(let underlying) = error else { return false }
            return underlying.code == .timedOut
        }
    }

    @Test func anErrorAnswerEchoingTheCredentialsKeepsThemOutOfEveryFieldAndDump() async throws {
        let endpoint = try LoopbackServer { request in
            let authorization = request.headers["authorization"] ?? ""
            let body = String(decoding: request.body, as: UTF8.self)
            let echo =
                #"{"error":"invalid_grant","error_description":"\#(authorization) \#(body)","error_uri":"https://e.test/?\#(body)"}"#
            return .answer(status: 400, headers: ["Content-Type": "application/json"], body: Data(echo.utf8))
        }
        defer { endpoint.stop() }
        let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        do {
            _ = try await client.refresh(token)
            Issue.record("expected an error")
        } catch {
            let basic = Data("client-id:\(Self.secret)".utf8).base64EncodedString()
            Self.expectNoneOf([Self.secret, Self.refreshToken, basic], printedIn: error)
        }
    }

    /// Checks that no form in which `error` may be printed (its description, its debug
    /// description, `dump`, and all of those wrapped in `refreshFailed`) holds any of `secrets`.
    private static func expectNoneOf(
        _ secrets: [String], printedIn error: any Error, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var texts: [String] = []
        for printed in [error, RefreshQueueError.refreshFailed(error)] as [any Error] {
            var dumped = ""
            dump(printed, to: &dumped)
            texts += [String(describing: printed), String(reflecting: printed), dumped]
        }
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(secret), "a secret appears in \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func anErrorAnswerEchoingAnAdditionalParameterOrHeaderKeepsItsValueOut() async throws {
        // A client assertion and an API key: what a client's description already hides.
        let assertion = "eyJhbGciOiJSUzI1NiJ9.client-assertion-value"
        let apiKey = "api-key-0123456789"
        let endpoint = try LoopbackServer { request in
            let echo = "sent: " + String(decoding: request.body, as: UTF8.self) + " " + request.everything
            let body = try? JSONSerialization.data(withJSONObject: [
                "error": "invalid_client", "error_description": echo,
            ])
            return .answer(status: 400, headers: ["Content-Type": "application/json"], body: body ?? Data())
        }
        defer { endpoint.stop() }
        var client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        client.additionalParameters = ["client_assertion": assertion]
        client.additionalHeaders = ["X-Api-Key": apiKey]
        do {
            _ = try await client.refresh(token)
            Issue.record("expected an error")
        } catch {
            #expect(String(describing: error).contains("[redacted]"))
            Self.expectNoneOf([assertion, apiKey, Self.refreshToken], printedIn: error)
        }
    }

    /// RFC 6749 §5.2 asks for a `WWW-Authenticate` challenge on a 401 `invalid_client`, which the
    /// client refuses (Linux's URLSession would otherwise wait for a password). The server's error
    /// and its `Retry-After` still come through: they were replaced by a text of the library's own,
    /// and the pause was lost.
    @Test(arguments: [
        (#"{"error":"invalid_client","error_description":"bad secret"}"#, "bad secret"), ("refused", nil),
    ])
    func aChallenged401KeepsTheServersErrorAndItsRetryAfter(body: String, description: String?) async throws {
        let endpoint = try LoopbackServer { _ in
            .answer(
                status: 401,
                headers: [
                    "WWW-Authenticate": "Basic realm=\"token\"", "Retry-After": "30",
                    "Content-Type": "application/json",
                ],
                body: Data(body.utf8))
        }
        defer { endpoint.stop() }
        let client = client(endpoint.baseURL.appendingPathComponent("api/token"), session: .shared)
        await #expect {
            _ = try await client.refresh(token)
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let answer) = error else { return false }
            return answer.code == .invalidClient && answer.status == 401 && answer.errorDescription == description
                && answer.retryAfter == 30
        }
    }

    /// A secret given after the client was made without one is sent: `.basic` had been turned into
    /// `.none` for good when the client was made, and every grant went out without the secret.
    @Test func aSecretGivenLaterIsSentWithBasic() async throws {
        let endpoint = try LoopbackServer { _ in
            .answer(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"access_token":"fresh","token_type":"Bearer","expires_in":3600}"#.utf8))
        }
        defer { endpoint.stop() }
        var client = TokenEndpointClient(
            tokenURL: endpoint.baseURL.appendingPathComponent("api/token"), clientID: "client-id", session: .shared)
        #expect(client.clientAuthentication == .none)
        client.clientSecret = Self.secret
        #expect(client.clientAuthentication == .basic)
        _ = try await client.refresh(token)
        let sent = try #require(endpoint.requests.last)
        let basic = Data("client-id:\(Self.secret)".utf8).base64EncodedString()
        #expect(sent.headers["authorization"] == "Basic \(basic)")
        #expect(!String(decoding: sent.body, as: UTF8.self).contains("client_id"))
    }

    @Test func aTransportErrorKeepsItsCodeButNotTheTokenURLsCredentials() async throws {
        // A port nothing listens on, and a token URL that carries credentials in its user part and query.
        let (descriptor, port) = try LoopbackServer.listeningSocket()
        close(descriptor)
        let url = try #require(
            URL(string: "http://user:url-password-0123@127.0.0.1:\(port)/token?api_key=query-secret-0123"))
        let client = client(url, session: .shared)
        do {
            _ = try await client.refresh(token)
            Issue.record("expected an error")
        } catch {
            guard case OAuth2Error.transport(let underlying) = error else {
                Issue.record("expected a transport error, got \(error)")
                return
            }
            #expect(underlying.code == .cannotConnectToHost)
            Self.expectNoneOf(
                ["url-password-0123", "query-secret-0123", Self.refreshToken, Self.secret], printedIn: error)
        }
    }
}
