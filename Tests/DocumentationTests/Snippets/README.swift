// swift-format-ignore-file
// The Swift snippets of README.md, verbatim: the formatter would re-align the README's comments and
// break its long lines, so that they no longer match it line for line.

import Dispatch
import Foundation
import RefreshQueue
import RefreshQueueRedis

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's own `SpotifyAuthentication` and what its snippets use, nested so that they do not
/// clash with the declarations of the articles' snippets.
enum ReadmeSnippets {
    // MARK: - What the snippets assume exists in an app

    /// The app's own store of its ``SpotifyAuthentication`` (the quick start's `store`).
    struct SpotifyStore: Sendable {
        func save(_ authentication: SpotifyAuthentication) {}
        func load() -> SpotifyAuthentication? { nil }
    }

    /// An app's logger.
    struct Logger: Sendable {
        func info(_ message: String) {}
    }

    static let logger = Logger()

    static func showLogin() {}
    static func openInBrowser(_ url: URL) {}

    // MARK: - OAuth 2.0 in five lines

    static func oauth2InFiveLines(tokenURL: URL, appSupport: URL, meURL: URL) async throws {
        let client = TokenEndpointClient(tokenURL: tokenURL, clientID: "your-client-id", clientSecret: "your-secret")
        let store = try FileAuthenticationStore<OAuth2Token>(fileURL: appSupport.appendingPathComponent("token.json"))
        let authentication = RefreshingRequestClosure(
            client: client, store: store, options: .init(origins: .only(URL(string: "https://api.spotify.com")!)),
            onReauthenticationRequired: { _ in showLogin() })
        let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
        handle(data, response)
    }

    static func logIn(
        client: TokenEndpointClient, store: FileAuthenticationStore<OAuth2Token>, redirectURL: URL
    ) async throws {
        let login = AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.spotify.com/authorize")!,
            clientID: "your-client-id", redirectURI: "myapp://callback", scope: "user-read-private")
        openInBrowser(login.url)                                 // the user logs in and consents
        let code = try login.code(fromRedirect: redirectURL)     // state checked first; errors typed
        try store.save(try await client.exchange(code: code, for: login))
    }

    static func logInFromACommandLineTool(
        client: TokenEndpointClient, store: FileAuthenticationStore<OAuth2Token>
    ) async throws {
        let receiver = try LoopbackRedirectReceiver()            // http://127.0.0.1:<port>/callback
        let cliLogin = AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.spotify.com/authorize")!,
            clientID: "your-client-id", redirectURI: receiver.redirectURI, scope: "user-read-private")
        print("Log in at \(cliLogin.url)")
        let cliCode = try await receiver.code(for: cliLogin)     // answers the browser, checks the state
        try store.save(try await client.exchange(code: cliCode, for: cliLogin))
    }

    // MARK: - Quick start with your own type

    static func plainURLSession(
        _ authentication: RefreshingRequestClosure<SpotifyAuthentication>, meURL: URL
    ) async throws {
        let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
        handle(data, response)
    }

    @available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
    static func asyncAwait(
        _ authentication: RefreshingRequestClosure<SpotifyAuthentication>, meURL: URL, session: URLSession
    ) async throws {
        let request = try await authentication.authorize(URLRequest(url: meURL))
        var (data, response) = try await session.data(for: request)
        if (response as? HTTPURLResponse)?.statusCode == 401 {
            let retry = try await authentication.reauthorize(request)   // refreshes once, signs again
            (data, response) = try await session.data(for: retry)       // once: never reauthorize the retry
        }
        handle(data, response)
    }

    static func callbacks(_ authentication: RefreshingRequestClosure<SpotifyAuthentication>, meURL: URL) {
        let task = authentication.authorize(URLRequest(url: meURL)) { result in
            switch result {
            case .success(let signed):
                URLSession.shared.dataTask(with: signed) { data, response, error in
                    // …
                }.resume()
            case .failure(let error): show(error)
            }
        }
        task.cancel()   // optional: a waiting request completes at once with RefreshQueueError.cancelled
    }

    static func exchangeWithoutAsync(
        client: TokenEndpointClient, store: FileAuthenticationStore<OAuth2Token>, login: AuthorizationCodeRequest,
        redirectURL: URL
    ) throws {
        let code = try login.code(fromRedirect: redirectURL)
        Future { client.exchange(code: code, for: login, completion: $0) }.observe(on: .main) { result in
            switch result {
            case .success(let token): try? store.save(token)
            case .failure(let error): show(error)
            }
        }
    }

    // MARK: - Moya (with the stand-ins of Support.swift)

    static func moya(_ authentication: RefreshingRequestClosure<SpotifyAuthentication>) -> MoyaProvider<SpotifyAPI> {
        let provider = MoyaProvider<SpotifyAPI>(
            requestClosure: authentication.requestClosure { error in MoyaError.underlying(error, nil) }
        )
        return provider
    }

    // MARK: - Sharing tokens between processes

    static func sharedFile(
        sharedContainer: URL, client: TokenEndpointClient
    ) throws -> RefreshingRequestClosure<OAuth2Authentication> {
        let store = try FileAuthenticationStore<OAuth2Token>(fileURL: sharedContainer.appendingPathComponent("token.json"))
        let authentication = RefreshingRequestClosure(client: client, store: store)
        return authentication
    }

    static func redis(client: TokenEndpointClient, redisPassword: String) -> RefreshingRequestClosure<OAuth2Authentication> {
        let store = RedisAuthenticationStore<OAuth2Token>(
            key: "spotify:token",
            configuration: RedisConfiguration(host: "10.0.0.5", password: redisPassword),
            lockTTL: 120)                                  // the closure's abandonAfter (120 s by default)
        let authentication = RefreshingRequestClosure(client: client, store: store)
        return authentication
    }

    // MARK: - Options

    static func options() -> RefreshingRequestClosure<SpotifyAuthentication> {
        let options = RefreshingRequestClosure<SpotifyAuthentication>.Options(
            refreshTimeout: 30,                          // seconds a request may wait before it fails
            abandonAfter: nil,                           // seconds before a refresh that never ends is given
                                                         // up; nil: 4 × refreshTimeout, at least 120 s
            refreshWindow: RefreshWindow(maximumRefreshes: 5, interval: 30),
            scheme: .bearer,                             // .basic, try AuthorizationScheme(scheme: "Token"),
                                                         // try AuthorizationScheme(headerName: "X-API-Key")
            missingAuthentication: .fail,                // or .sendUnsigned, for public endpoints
            origins: .only(URL(string: "https://api.spotify.com")!),  // who receives the token (default .all)
            requiresAuthentication: { _ in true },       // which requests are signed at all
            completionQueue: nil,                        // the queue completion handlers run on (default: see below)
            onEvent: { event in logger.info("\(event)") },  // refresh started/succeeded/failed, waiting, … (default nil)
            clock: { ProcessInfo.processInfo.systemUptime }  // monotonic seconds; inject one in tests
        )
        let authentication = RefreshingRequestClosure<SpotifyAuthentication>(
            options: options,
            find: { SpotifyAuthentication.find() }       // where the authentication is loaded from
        )
        return authentication
    }

    static func defaults() -> [RefreshingRequestClosure<SpotifyAuthentication>] {
        [RefreshingRequestClosure<SpotifyAuthentication>(), RefreshingRequestClosure<SpotifyAuthentication>(refreshTimeout: 10)]
    }

    struct AheadAuthentication: RefreshableAuthentication {
        let accessToken: String
        let expiresAt: Date

        var isRefreshRecommended: Bool { expiresAt.timeIntervalSinceNow < 300 }   // in the background
        var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 10 }         // requests wait

        func refresh() -> Future<AheadAuthentication> { Future(error: URLError(.notConnectedToInternet)) }
        static func find() -> AheadAuthentication? { nil }
    }
}

// MARK: - Quick start with your own type (at file scope, as in the README)

/// The app's own store of its ``SpotifyAuthentication``.
let store = ReadmeSnippets.SpotifyStore()

struct SpotifyAuthentication: RefreshableAuthentication {
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date

    var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 60 }

    func refresh() -> Future<SpotifyAuthentication> {
        Future { complete in
            tokenClient.refresh(using: refreshToken) { result in
                complete(result.map { response in
                    let fresh = SpotifyAuthentication(
                        accessToken: response.accessToken,
                        // Keep the old refresh token when the server sends none (RFC 6749 §6).
                        refreshToken: response.refreshToken ?? refreshToken,
                        expiresAt: Date() + response.expiresIn)
                    store.save(fresh)
                    return fresh
                })
            }
        }
    }

    static func find() -> SpotifyAuthentication? { store.load() }
}

let authentication = RefreshingRequestClosure<SpotifyAuthentication>(
    // The token request itself must not wait for the refresh it performs.
    options: .init(requiresAuthentication: { $0.url?.host == "api.spotify.com" })
)

// MARK: - Beyond one machine: a store of your own, in outline

/// The README's outline of a Redis store on another client, with each step a comment.
final class MyRedisStore: CoordinatedAuthenticationStore {
    func load() -> OAuth2Token? {
        nil  // GET key, decode JSON
    }
    func save(_ value: OAuth2Token) throws {
        // SET key <JSON>
    }
    func remove() throws {
        // DEL key
    }
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        // SET key:lock <random> NX PX <abandonAfter ms>, retried until timeout;
        // the lock's unlock(): EVAL compare-and-delete of key:lock
        throw AuthenticationStoreError.lockTimedOut(after: timeout)
    }
}
