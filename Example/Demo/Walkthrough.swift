import Foundation
import RefreshQueue
import SpotifyStub

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `swift run Example`: RefreshQueue end to end against a local Spotify-like token server.
@main
struct Walkthrough {
    static func main() async {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n\n\(Options.usage)\n".utf8))
            exit(2)
        }
        if options.help {
            say(Options.usage)
            return
        }
        do {
            if options.serve {
                try await serve(options)
            }
            let succeeded = try await Walkthrough(options: options).run()
            exit(succeeded ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    let options: Options
    let timeline = Timeline()

    /// Runs every step; returns whether every request got a 200.
    func run() async throws -> Bool {
        // 1. The token server.
        let stub = SpotifyStub()
        stub.accessTokenLifetime = options.lifetime
        stub.rotatesRefreshTokens = options.rotate
        try stub.start()
        defer { stub.stop() }
        timeline.log("Spotify-like token server listening on \(stub.baseURL.absoluteString)")

        let session = URLSession(
            configuration: .walkthrough(concurrency: min(options.requests, 64)), delegate: RedirectRefusal(),
            delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let client = SpotifyStub.Client.example
        let accounts = SpotifyAccounts(
            baseURL: stub.baseURL, clientID: client.id, clientSecret: client.secret,
            redirectURI: client.redirectURIs[0], session: session)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tokenFile = TokenFile(url: directory.url.appendingPathComponent("spotify-authentication.json"))
        AppEnvironment.shared.configure(.init(accounts: accounts, tokenFile: tokenFile))

        // 2. Log in: the authorization-code flow, and persist what it yields.
        let authentication = try await logIn(with: accounts)
        try tokenFile.save(authentication)
        let mode = tokenFile.permissions.map { String($0, radix: 8) } ?? "?"
        timeline.log(
            "logged in (authorization code flow, state checked); authentication saved to "
                + "\(tokenFile.url.lastPathComponent), mode \(mode)")

        // 3. Time passes: the access token expires, on the server and in the saved authentication.
        try tokenFile.save(authentication.aged(by: authentication.lifetime + 1))
        stub.expireAccessTokens()
        stub.resetCounters()
        timeline.log("time passes: the access token has expired")

        // 4. Many requests at once, through three kinds of code, all waiting for one refresh.
        let closure = RefreshingRequestClosure<SpotifyAuthentication>(
            // Tokens that live only seconds (--lifetime) legitimately need more refreshes than
            // the default loop protection (5 in 30 s) allows.
            refreshWindow: RefreshWindow(maximumRefreshes: max(5, Int(60 / options.lifetime) + 5), interval: 30),
            // Only the Web API gets the token; the token endpoint authenticates the client itself.
            requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true },
            onEvent: { event in report(event) }
        )
        let provider = Provider(
            baseURL: stub.baseURL, session: session,
            requestClosure: closure.requestClosure { ProviderError.underlying($0) })
        let tally = Tally()
        let split = Split(total: options.requests)
        timeline.log(
            "firing \(options.requests) requests to /v1/me at once: \(split.provider) through a Moya-shaped "
                + "provider, \(split.callbacks) with callbacks, \(split.async) with async/await")
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<options.requests {
                group.addTask {
                    switch split.kind(of: index) {
                    case .provider: await viaProvider(provider, tally: tally)
                    case .callbacks: await viaCallbacks(closure, baseURL: stub.baseURL, session: session, tally: tally)
                    case .async: await viaAsync(closure, baseURL: stub.baseURL, session: session, tally: tally)
                    }
                }
            }
        }

        // 5. What happened, according to the server and to the clients.
        let counters = stub.counters
        let (statuses, errors) = tally.snapshot
        timeline.log(
            "all requests answered: "
                + statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", "))
        for error in Set(errors).sorted().prefix(5) {
            timeline.log("error: \(error)")
        }
        if options.rotate {
            timeline.log("refresh-token reuse detected by the server: \(counters.reuseDetections)")
        }
        let refreshes = counters.refreshTokenGrants
        let ok = statuses[200, default: 0]
        var parts = ["\(options.requests) requests", "\(refreshes) \(refreshes == 1 ? "refresh" : "refreshes")"]
        parts += statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }
        parts.append("\(errors.count) \(errors.count == 1 ? "error" : "errors")")
        say(parts.joined(separator: " · "))
        return ok == options.requests && errors.isEmpty && counters.reuseDetections == 0
    }

    // MARK: - Steps

    /// The authorization-code flow: `/authorize` (consent is automatic), redirect, state check,
    /// code exchange.
    private func logIn(with accounts: SpotifyAccounts) async throws -> SpotifyAuthentication {
        let state = UUID().uuidString
        guard let url = accounts.authorizeURL(state: state) else {
            throw ExampleError.authorization("cannot build the authorize URL")
        }
        let (_, response) = try await accounts.session.data(for: URLRequest(url: url))
        guard let http = response as? HTTPURLResponse, http.statusCode == 302,
            let location = http.value(forHTTPHeaderField: "Location"),
            let redirect = URLComponents(string: location)
        else {
            throw ExampleError.authorization("expected a redirect from /authorize")
        }
        let query = Dictionary(
            (redirect.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        guard query["state"] == state else {
            throw ExampleError.authorization("the state in the redirect does not match: possible CSRF")
        }
        if let error = query["error"] {
            throw ExampleError.authorization(error)
        }
        guard let code = query["code"], !code.isEmpty else {
            throw ExampleError.authorization("the redirect carries no code")
        }
        let tokens = try await accounts.exchange(code: code)
        return SpotifyAuthentication(tokens, previousRefreshToken: nil)
    }

    private func viaProvider(_ provider: Provider, tally: Tally) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            provider.request(.me) { result in
                switch result {
                case .success(let status): tally.record(status: status)
                case .failure(let error): tally.record(error: error)
                }
                done.resume()
            }
        }
    }

    /// Code that predates async/await: a completion handler, then a data task.
    private func viaCallbacks(
        _ closure: RefreshingRequestClosure<SpotifyAuthentication>, baseURL: URL, session: URLSession, tally: Tally
    ) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            closure.authorize(URLRequest(url: baseURL.appendingPathComponent("v1/me"))) { result in
                switch result {
                case .failure(let error):
                    tally.record(error: error)
                    done.resume()
                case .success(let signed):
                    session.dataTask(with: signed) { _, response, error in
                        if let error {
                            tally.record(error: error)
                        } else {
                            tally.record(status: (response as? HTTPURLResponse)?.statusCode ?? 0)
                        }
                        done.resume()
                    }.resume()
                }
            }
        }
    }

    private func viaAsync(
        _ closure: RefreshingRequestClosure<SpotifyAuthentication>, baseURL: URL, session: URLSession, tally: Tally
    ) async {
        do {
            let signed = try await closure.authorize(URLRequest(url: baseURL.appendingPathComponent("v1/me")))
            let (_, response) = try await session.data(for: signed)
            tally.record(status: (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            tally.record(error: error)
        }
    }

    /// Turns the closure's events into timeline lines. Events never contain a token.
    private func report(_ event: RefreshEvent) {
        switch event {
        case .refreshStarted:
            timeline.log("refresh started; requests wait behind it")
        case .refreshSucceeded(let duration):
            timeline.log("refresh succeeded in \(Int((duration * 1000).rounded())) ms")
        case .requestsResumed(let waiting):
            timeline.log("queue resumed: \(waiting) waiting \(waiting == 1 ? "request" : "requests") go out")
        case .refreshFailed, .refreshTimedOut, .refreshRefused, .lateRefreshAdopted:
            timeline.log(event.description)
        case .authenticationLoaded, .requestWaiting:
            break
        }
    }

    // MARK: - Serve only

    /// `--serve`: run the token server until interrupted.
    private static func serve(_ options: Options) async throws -> Never {
        let stub = SpotifyStub()
        stub.accessTokenLifetime = options.lifetime
        stub.rotatesRefreshTokens = options.rotate
        try stub.start()
        let client = SpotifyStub.Client.example
        let base = stub.baseURL.absoluteString
        say(
            """
            Spotify-like token server listening on \(base)  (Ctrl-C stops it)
            client id \(client.id), redirect URI \(client.redirectURIs[0])
            (the client secret is in SpotifyStub.Client.example)

              curl -i '\(base)/authorize?client_id=\(client.id)&response_type=code&redirect_uri=\(client.redirectURIs[0])&state=xyz'
              curl -i -u \(client.id):<client secret> -d grant_type=authorization_code -d code=<code> \\
                   -d redirect_uri=\(client.redirectURIs[0]) \(base)/api/token
              curl -i -H 'Authorization: Bearer <access token>' \(base)/v1/me
            """)
        while true {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
    }
}

/// How the requests are shared among the three kinds of code.
struct Split: Sendable {
    enum Kind { case provider, callbacks, async }

    let total: Int

    func kind(of index: Int) -> Kind {
        switch index % 3 {
        case 0: return .provider
        case 1: return .callbacks
        default: return .async
        }
    }

    var provider: Int { (total + 2) / 3 }
    var callbacks: Int { (total + 1) / 3 }
    var async: Int { total / 3 }
}

/// Refuses redirects, so that the walkthrough can read `/authorize`'s answer itself, and
/// authentication challenges, which it answers itself.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    /// On Linux, URLSession never completes a request answered `401` with
    /// `WWW-Authenticate: Basic` (as a token endpoint answers a bad client secret) unless the
    /// delegate settles the challenge; cancelling it ends the request with `URLError.cancelled`.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

extension URLSessionConfiguration {
    /// Ephemeral (nothing cached or stored), enough connections for the burst, short timeouts.
    static func walkthrough(concurrency: Int) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(1, concurrency)
        configuration.timeoutIntervalForRequest = 15
        return configuration
    }
}

/// A private temporary directory (mode 0700), removed at the end.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("refreshqueue-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
