import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs in to the stub with the authorization-code flow: `/authorize` (consent is automatic),
/// the redirect's code (state checked), then the code exchange through the library's client.
enum LoopbackLogin {
    /// Returns the token the stub issued; its lifetime is the stub's `accessTokenLifetime` now.
    static func logIn(stub: SpotifyStub, client: TokenEndpointClient, session: URLSession) async throws -> OAuth2Token {
        let example = SpotifyStub.Client.example
        guard let redirectURI = example.redirectURIs.first else {
            throw BenchmarkError("the example client has no redirect URI")
        }
        let state = UUID().uuidString
        var components = URLComponents(
            url: stub.baseURL.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "client_id", value: example.id),
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "scope", value: "user-read-private"),
        ]
        guard let url = components?.url else {
            throw BenchmarkError("cannot build the /authorize URL")
        }
        let (_, response) = try await LoopbackSession.transfer(URLRequest(url: url), on: session)
        guard let http = response as? HTTPURLResponse, http.statusCode == 302,
            let location = http.value(forHTTPHeaderField: "Location"),
            let items = URLComponents(string: location)?.queryItems
        else {
            throw BenchmarkError("/authorize did not redirect back with a code")
        }
        guard items.first(where: { $0.name == "state" })?.value == state,
            let code = items.first(where: { $0.name == "code" })?.value
        else {
            throw BenchmarkError("the redirect from /authorize has no code or the wrong state")
        }
        return try await client.exchange(code: code, redirectURI: redirectURI)
    }
}
