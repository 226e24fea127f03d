import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The grants of `TokenEndpointClient` from code that is not `async`: each calls a completion
/// handler, which a `Future` wraps here to chain them.
@Suite("TokenEndpointClient without async/await", .timeLimit(.minutes(5)))
struct TokenEndpointClientCallbackTests {
    @Test func callbackCodeLogsInAndRefreshesThroughFutures() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = StubHarness.exampleClient(stub)
        let code = try await StubHarness.authorizationCode(stub, session: StubHarness.makeSession())

        let tokens = try await Self.logInThenRefresh(client, code: code).value
        #expect(tokens.login.accessToken != tokens.refreshed.accessToken)
        #expect(tokens.refreshed.refreshToken != nil)
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test func aRefusedGrantFailsTheFutureWithTheEndpointsError() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = StubHarness.exampleClient(stub)
        let code = try await StubHarness.authorizationCode(stub, session: StubHarness.makeSession())
        let redirectURI = SpotifyStub.Client.example.redirectURIs[0]

        let login = try await Self.exchange(client, code: code, redirectURI: redirectURI).value
        // The same code a second time: the server refuses it.
        let reused = await Self.exchange(client, code: code, redirectURI: redirectURI).result(after: 30)
        guard case .failure(let error) = reused else {
            Issue.record("a reused authorization code was accepted")
            return
        }
        #expect(error is OAuth2Error)
        #expect(!String(describing: error).contains(login.accessToken))
    }

    @Test(.exclusive) func aHangingTokenEndpointFailsTheFutureByTheClientsTimeout() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let token = try await StubHarness.logIn(stub, through: StubHarness.exampleClient(stub))
        stub.injectFaults(.hang)
        // A session that would wait ten minutes: only the client's own deadline ends the request.
        let patient = URLSessionConfiguration.ephemeral
        patient.timeoutIntervalForRequest = 600
        patient.timeoutIntervalForResource = 600
        let session = URLSession(configuration: patient)
        defer { session.invalidateAndCancel() }
        let client = StubHarness.exampleClient(stub, session: session, requestTimeout: 0.5)

        let result = await Self.refresh(client, token).result(after: 30)
        guard case .failure(OAuth2Error.transport(let underlying)) = result else {
            Issue.record("a hanging token endpoint did not fail the future with a transport timeout: \(result)")
            return
        }
        #expect(underlying.code == .timedOut)
    }

    /// The refresh grant from code that is not `async`.
    private static func refresh(_ client: TokenEndpointClient, _ token: OAuth2Token) -> Future<OAuth2Token> {
        Future { complete in client.refresh(token, completion: complete) }
    }

    /// Callback-era code: no `async` here, so the grants' completions are chained through futures.
    private static func logInThenRefresh(
        _ client: TokenEndpointClient, code: String
    ) -> Future<(login: OAuth2Token, refreshed: OAuth2Token)> {
        exchange(client, code: code, redirectURI: SpotifyStub.Client.example.redirectURIs[0])
            .flatMap { login in refresh(client, login).map { (login: login, refreshed: $0) } }
    }

    /// The code grant from code that is not `async`.
    private static func exchange(
        _ client: TokenEndpointClient, code: String, redirectURI: String
    ) -> Future<OAuth2Token> {
        Future { complete in client.exchange(code: code, redirectURI: redirectURI, completion: complete) }
    }
}

extension Future {
    /// The result, or a failure if none came within `seconds`.
    fileprivate func result(after seconds: TimeInterval) async -> Result<Value, any Error> {
        do {
            return .success(try await timeout(after: seconds).value)
        } catch {
            return .failure(error)
        }
    }
}
