// The Swift snippets of OAuth2AndStores.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DocsB {
    static func overview(appSupport: URL, apiURL: URL, meURL: URL) async throws {
        let client = TokenEndpointClient(
            tokenURL: URL(string: "https://accounts.spotify.com/api/token")!,
            clientID: "your-client-id", clientSecret: "your-client-secret")
        let store = try FileAuthenticationStore<OAuth2Token>(fileURL: appSupport.appendingPathComponent("token.json"))
        let authentication = RefreshingRequestClosure(
            client: client, store: store, options: .init(origins: .only(apiURL)),
            onReauthenticationRequired: { _ in DispatchQueue.main.async { showLogin() } })
        let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
        handle(data, response)
    }

    static func clients(tokenURL: URL) -> [TokenEndpointClient] {
        let publicClient = TokenEndpointClient(tokenURL: tokenURL, clientID: "your-client-id")

        let client = TokenEndpointClient(
            tokenURL: tokenURL,
            clientID: "your-client-id",
            clientSecret: "your-client-secret",
            clientAuthentication: .requestBody,
            additionalParameters: ["audience": "https://api.example.com"],
            requestTimeout: 15)
        return [publicClient, client]
    }

    static func leeways(
        client: TokenEndpointClient, store: FileAuthenticationStore<OAuth2Token>
    ) -> RefreshingRequestClosure<OAuth2Authentication> {
        // Refresh ahead once less than max(5 min, 20 % of the lifetime) is left; wait only in the last 30 s.
        let early = TokenLeeway(minimum: 300, fractionOfLifetime: 0.2, maximumFractionOfLifetime: 0.5, safetyMargin: 30)
        // No refresh ahead: requests wait for a refresh within min(10 s, 10 % of the lifetime) of expiry.
        let onlyWhenNeeded = TokenLeeway(minimum: 10, fractionOfLifetime: 0, maximumFractionOfLifetime: 0.1)
        let authentication = RefreshingRequestClosure(client: client, store: store, leeway: early)
        _ = onlyWhenNeeded
        return authentication
    }

    static func startLogin() -> AuthorizationCodeRequest {
        let login = AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.spotify.com/authorize")!,
            clientID: "your-client-id", redirectURI: "myapp://callback", scope: "user-read-private")
        openInBrowser(login.url)  // in the browser, or an ASWebAuthenticationSession: the user logs in and consents
        return login
    }

    static func finishLogin(
        _ login: AuthorizationCodeRequest, redirectURL: URL, client: TokenEndpointClient,
        store: FileAuthenticationStore<OAuth2Token>
    ) async {
        do {
            let code = try login.code(fromRedirect: redirectURL)  // the redirect URI and the state are checked first
            let token = try await client.exchange(code: code, for: login)
            try store.save(token)
        } catch AuthorizationCodeError.authorizationFailed(error: "access_denied", description: _) {
            // The user declined: back to the start screen, nothing to report.
        } catch {
            show(error)
        }
    }

    static func finishLoginWithFuture(
        _ login: AuthorizationCodeRequest, redirectURL: URL, client: TokenEndpointClient,
        store: FileAuthenticationStore<OAuth2Token>
    ) throws {
        let code = try login.code(fromRedirect: redirectURL)
        Future { client.exchange(code: code, for: login, completion: $0) }.observe(on: .main) { result in
            switch result {
            case .success(let token): try? store.save(token)
            case .failure(let error): show(error)
            }
        }
    }

    static func logInFromACommandLineTool(client: TokenEndpointClient) async throws -> OAuth2Token {
        let receiver = try LoopbackRedirectReceiver()
        let login = AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.spotify.com/authorize")!,
            clientID: "your-client-id", redirectURI: receiver.redirectURI, scope: "user-read-private")
        print("Open \(login.url) in your browser to log in.")
        let code = try await receiver.code(for: login, timeout: 300)
        let token = try await client.exchange(code: code, for: login)
        return token
    }

    static func logOut(
        store: FileAuthenticationStore<OAuth2Token>, authentication: RefreshingRequestClosure<OAuth2Authentication>
    ) throws {
        try store.remove()
        authentication.invalidate()
    }

    static func inMemory(client: TokenEndpointClient) -> RefreshingRequestClosure<OAuth2Authentication> {
        let store = InMemoryAuthenticationStore(
            OAuth2Token(accessToken: "test-access-token", refreshToken: "test-refresh-token", expiresIn: 3600))
        let authentication = RefreshingRequestClosure(client: client, store: store)
        return authentication
    }

    static func fileStore() throws -> FileAuthenticationStore<OAuth2Token> {
        let directory = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        let store = try FileAuthenticationStore<OAuth2Token>(
            fileURL: directory.appendingPathComponent("MyApp/token.json"),
            protection: .completeUntilFirstUserAuthentication,
            onEvent: { event in log("\(event)") })
        return store
    }

    static func atLaunch(store: FileAuthenticationStore<OAuth2Token>) {
        do {
            if try store.read() == nil { showLogin() }
        } catch {
            // The file exists but cannot be read now (a locked device, changed permissions):
            // the user is still logged in. Try again later, and do not save over it.
        }
    }

    static func ownType(tokenFileURL: URL, apiURL: URL) throws -> RefreshingRequestClosure<SessionAuthentication> {
        let store = try FileAuthenticationStore<SessionAuthentication>(fileURL: tokenFileURL)
        let authentication = RefreshingRequestClosure(
            store: store, options: .init(origins: .only(apiURL)),
            onReauthenticationRequired: { _ in DispatchQueue.main.async { showLogin() } })
        return authentication
    }
}

struct KeychainTokenStore: AuthenticationStore {
    let item: KeychainItem

    func read() throws -> OAuth2Token? {
        // Throws while the device keeps the item locked: not a logout.
        guard let data = try item.read() else { return nil }
        return try? JSONDecoder().decode(OAuth2Token.self, from: data)
    }

    func load() -> OAuth2Token? {
        (try? read()) ?? nil
    }

    func save(_ value: OAuth2Token) throws {
        try item.write(JSONEncoder().encode(value))
    }

    func remove() throws {
        try item.delete()
    }
}

struct SessionAuthentication: RefreshableAuthentication, Codable {
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date

    var isRefreshRecommended: Bool { expiresAt.timeIntervalSinceNow < 300 }
    var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 10 }

    func refresh() -> Future<SessionAuthentication> {
        Future {
            let response = try await tokenClient.refresh(using: refreshToken)
            return SessionAuthentication(
                accessToken: response.accessToken,
                refreshToken: response.refreshToken ?? refreshToken,
                expiresAt: Date() + response.expiresIn)
        }
    }

    // Not called: the closure reads the store.
    static func find() -> SessionAuthentication? { nil }
}
