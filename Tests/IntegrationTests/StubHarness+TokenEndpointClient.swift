import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StubHarness {
    /// The library's token endpoint client for the stub's example client, on `session` (the
    /// library's default session when nil).
    static func exampleClient(
        _ stub: SpotifyStub, session: URLSession? = nil, requestTimeout: TimeInterval = 10
    ) -> TokenEndpointClient {
        let example = SpotifyStub.Client.example
        return TokenEndpointClient(
            tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: example.id,
            clientSecret: example.secret, session: session ?? TokenEndpointClient.defaultSession,
            requestTimeout: requestTimeout)
    }

    /// Logs the example user in through `client`: an authorization code, then its exchange.
    static func logIn(_ stub: SpotifyStub, through client: TokenEndpointClient) async throws -> OAuth2Token {
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        return try await client.exchange(
            code: try await authorizationCode(stub, session: session),
            redirectURI: SpotifyStub.Client.example.redirectURIs[0])
    }
}
