import Foundation
import LocalRedis
import RefreshQueue
import RefreshQueueRedis
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
            say("error: \(error)\n\n\(Options.usage)", to: STDERR_FILENO)
            exit(2)
        }
        keepThisMachineOffProxies()
        if options.help {
            say(Options.usage)
            return
        }
        do {
            if options.serve {
                try await serve(options)
            }
            if let worker = options.worker {
                Cleanup.ignoreInterruptions()
                let succeeded = await Burst.runWorker(
                    worker, requests: options.requests, inFlight: options.inFlight, lifetime: options.lifetime,
                    publicClient: options.publicClient)
                exit(succeeded ? 0 : 1)
            }
            Cleanup.shared.installSignalHandlers()
            let succeeded = try await Walkthrough(options: options).run()
            Cleanup.shared.exit(succeeded ? 0 : 1)
        } catch {
            Cleanup.shared.fail("error: \(error)")
        }
    }

    let options: Options
    let timeline = Timeline()

    /// The environment variable that hands `--fleet` workers the Redis password.
    static let redisPasswordVariable = "REFRESHQUEUE_REDIS_PASSWORD"
    /// The Redis key `--fleet` shares the token under.
    static let redisKey = "spotify:token"

    /// Runs every step; returns whether every request got a 200.
    func run() async throws -> Bool {
        // 1. The token server.
        let stub = SpotifyStub(port: options.port)
        stub.accessTokenLifetime = options.lifetime
        stub.rotatesRefreshTokens = options.rotate
        try stub.start()
        defer { stub.stop() }
        timeline.log("Spotify-like token server listening on \(stub.baseURL.absoluteString)")

        let session = URLSession.walkthrough(concurrency: min(options.requests, Burst.concurrency))
        defer { session.invalidateAndCancel() }
        let tokenSession = URLSession.tokenRequests()
        defer { tokenSession.invalidateAndCancel() }
        let client = TokenEndpointClient.example(
            baseURL: stub.baseURL, session: tokenSession, public: options.publicClient)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<OAuth2Token>(
            fileURL: directory.url.appendingPathComponent("spotify-token.json"))

        // 2. Log in: the authorization-code flow, and persist what it yields.
        let token = try await logIn(base: stub.baseURL, client: client, session: session)
        try store.save(token)
        let mode = store.permissions.map { String($0, radix: 8) } ?? "?"
        timeline.log(
            "logged in (authorization code flow with PKCE S256, state checked\(options.publicClient ? ", public client: no secret" : "")); token saved to "
                + "\(store.fileURL.lastPathComponent), mode \(mode)")

        // 3. Time passes: the access token expires, on the server and in the saved token.
        try store.save(token.expired)
        stub.expireAccessTokens()
        stub.resetCounters()
        timeline.log("time passes: the access token has expired")

        // 4. Many requests at once, all waiting for one refresh.
        let tally: Tally
        if options.fleet {
            guard let redis = startRedis() else { return false }
            let server = redis.processIdentifier
            defer {
                redis.stop()
                if let server { Cleanup.shared.unregister(process: server) }
            }
            let shared = RedisAuthenticationStore<OAuth2Token>(
                key: Self.redisKey, configuration: RedisConfiguration(port: redis.port, password: redis.password))
            try shared.save(token.expired)
            tally = try await runWorkers(
                stub: stub, token: .redis(port: redis.port, key: Self.redisKey),
                environment: [Self.redisPasswordVariable: redis.password])
        } else if options.processes > 1 {
            tally = try await runWorkers(stub: stub, token: .file(store.fileURL))
        } else {
            let live = Tally()
            let closure = RefreshingRequestClosure.walkthrough(
                client: client, store: store, timeline: timeline, tally: live)
            await Burst(closure: closure, baseURL: stub.baseURL, session: session, tally: live)
                .run(requests: options.requests, timeline: timeline)
            // The burst's figures; then a refresh ahead still running is let end, so that its
            // lines come before the summary and its token is saved before the program goes.
            tally = Tally()
            tally.merge(live)
            try? await closure.refreshIfNeeded()
        }

        // 5. What happened, according to the server and to the clients.
        return summarize(tally: tally, counters: stub.counters)
    }

    // MARK: - Steps

    /// The authorization-code flow: `/authorize` (consent is automatic), redirect, state check,
    /// code exchange with the PKCE S256 verifier.
    private func logIn(base: URL, client: TokenEndpointClient, session: URLSession) async throws -> OAuth2Token {
        if options.loopbackLogin { return try await logInThroughLoopback(base: base, client: client, session: session) }
        let example = SpotifyStub.Client.example
        let authorization = AuthorizationCodeRequest(
            authorizationEndpoint: base.appendingPathComponent("authorize"), clientID: example.id,
            redirectURI: example.redirectURIs[0], scope: "user-read-private")
        // A browser would follow the redirect back into the app; here the walkthrough reads it.
        let (_, response) = try await session.response(to: URLRequest(url: authorization.url))
        guard let http = response as? HTTPURLResponse, http.statusCode == 302,
            let location = http.value(forHTTPHeaderField: "Location").flatMap(URL.init(string:))
        else {
            throw ExampleError.authorization("expected a redirect from /authorize")
        }
        let code = try authorization.code(fromRedirect: location)
        return try await client.exchange(code: code, for: authorization)
    }

    /// `--login loopback`: the login of a command-line tool. A listener on 127.0.0.1 receives the
    /// redirect; the browser is played by following the authorize redirect to it.
    private func logInThroughLoopback(
        base: URL, client: TokenEndpointClient, session: URLSession
    ) async throws -> OAuth2Token {
        let receiver = try LoopbackRedirectReceiver()
        let login = AuthorizationCodeRequest(
            authorizationEndpoint: base.appendingPathComponent("authorize"), clientID: SpotifyStub.Client.example.id,
            redirectURI: receiver.redirectURI, scope: "user-read-private")
        timeline.log("loopback login: redirect URI \(receiver.redirectURI); the browser opens the login page")
        let code = Task { try await receiver.code(for: login, timeout: 30) }
        // Whatever goes wrong on the browser's side, the listener does not wait on.
        defer { receiver.close() }
        let (_, response) = try await session.response(to: URLRequest(url: login.url))
        guard let http = response as? HTTPURLResponse, http.statusCode == 302,
            let location = http.value(forHTTPHeaderField: "Location").flatMap(URL.init(string:))
        else {
            throw ExampleError.authorization("expected a redirect from /authorize")
        }
        let (page, _) = try await session.response(to: URLRequest(url: location))
        timeline.log("the browser shows: \(Self.text(ofPage: page))")
        return try await client.exchange(code: try await code.value, for: login)
    }

    /// The sentence of the receiver's page, without its markup.
    private static func text(ofPage page: Data) -> String {
        let html = String(decoding: page, as: UTF8.self)
        guard let start = html.range(of: "<p>"), let end = html.range(of: "</p>") else { return html }
        return String(html[start.upperBound..<end.lowerBound])
    }

    /// `--fleet K`: a redis-server of this machine's on a free loopback port, or nil (and why)
    /// when none can be started.
    private func startRedis() -> LocalRedis? {
        do {
            // Ctrl-C must not leave the server running, nor its data (tokens) on disk, even while
            // it starts.
            let redis = try LocalRedis { server, directory in
                Cleanup.shared.register(process: server)
                Cleanup.shared.register(directory: directory)
            }
            timeline.log(
                "started redis-server \(redis.version) (\(redis.executable.path)) on 127.0.0.1:\(redis.port) "
                    + "with a random password, given on its standard input; the token is shared under \(Self.redisKey)")
            return redis
        } catch {
            timeline.log("could not start Redis for --fleet: \(error)")
            say("--fleet needs redis-server: \(error)")
            return nil
        }
    }

    /// `--processes K` or `--fleet K`: K copies of this program share the token (a file, or a
    /// Redis key, each through a store of its own); each fires the requests.
    private func runWorkers(
        stub: SpotifyStub, token: Options.TokenLocation, environment: [String: String] = [:]
    ) async throws -> Tally {
        let count = options.processes
        let shared: String
        switch token {
        case .file(let url): shared = url.lastPathComponent
        case .redis(let port, let key): shared = "\(key) on Redis at 127.0.0.1:\(port)"
        }
        timeline.log("starting \(count) processes that share \(shared), \(options.requests) requests each")
        let tally = Tally()
        try await withThrowingTaskGroup(of: WorkerProcess.Outcome.self) { group in
            for index in 1...count {
                var arguments = ["--worker", stub.baseURL.absoluteString, token.argument, String(index)]
                arguments += ["--requests", String(options.requests), "--lifetime", String(options.lifetime)]
                // The processes share the connections one process would use, so that the server
                // sees the same load however many there are (and tokens that live 0.3 s are not
                // outlived by requests waiting in its queue).
                arguments += ["--in-flight", String(max(1, Burst.concurrency / count))]
                if options.publicClient { arguments.append("--public-client") }
                group.addTask { try await WorkerProcess.run(arguments: arguments, environment: environment) }
            }
            for try await outcome in group {
                tally.merge(outcome.tally)
                timeline.log("process \(outcome.index) finished: \(outcome.tally.line)")
            }
        }
        return tally
    }

    private func summarize(tally: Tally, counters: Counters) -> Bool {
        let (statuses, errors) = tally.snapshot
        timeline.log("all requests answered: \(Tally.statusList(statuses).joined(separator: ", "))")
        for error in Set(errors).sorted().prefix(5) {
            timeline.log("error: \(error)")
        }
        let refreshes = counters.refreshTokenGrants
        let total = statuses.values.reduce(0, +) + errors.count
        let held = tally.held
        timeline.log(
            "requests that waited for a refresh: \(held.first) for the first token, \(held.later) once a token was held"
        )
        var parts: [String] = []
        if options.processes > 1 || options.fleet {
            parts.append("\(options.processes) \(options.processes == 1 ? "process" : "processes")")
        }
        parts += ["\(total) requests", "\(refreshes) \(refreshes == 1 ? "refresh" : "refreshes")"]
        parts += Tally.statusList(statuses)
        parts.append("\(errors.count) \(errors.count == 1 ? "error" : "errors")")
        parts.append("\(held.later) waited once a token was held")
        if options.rotate || options.processes > 1 {
            let reuses = counters.reuseDetections
            parts.append("\(reuses) reuse \(reuses == 1 ? "detection" : "detections")")
        }
        say(parts.joined(separator: " · "))
        return statuses[200, default: 0] == options.requests * options.processes && errors.isEmpty
            && counters.reuseDetections == 0
    }

    // MARK: - Serve only

    /// `--serve`: run the token server until interrupted.
    private static func serve(_ options: Options) async throws -> Never {
        let stub = SpotifyStub(port: options.port)
        stub.accessTokenLifetime = options.lifetime
        stub.rotatesRefreshTokens = options.rotate
        try stub.start()
        let client = SpotifyStub.Client.example
        let base = stub.baseURL.absoluteString
        say(
            """
            Spotify-like token server listening on \(base)  (Ctrl-C stops it)
            demo client id \(client.id), client secret \(client.secret) (a demo's, known to all)
            redirect URIs: \(client.redirectURIs.joined(separator: ", "))
            (the loopback ones without a port take any port, as Spotify's do; localhost is refused)

              curl -i '\(base)/authorize?client_id=\(client.id)&response_type=code&redirect_uri=\(client.redirectURIs[0])&state=xyz'
              curl -i -u \(client.id):\(client.secret) -d grant_type=authorization_code -d code=<code> \\
                   -d redirect_uri=\(client.redirectURIs[0]) \(base)/api/token
              curl -i -H 'Authorization: Bearer <access token>' \(base)/v1/me
            """)
        while true {
            try await Task.sleep(nanoseconds: 3_600_000_000_000)
        }
    }
}

extension TokenEndpointClient {
    /// The stub's example client; `public`: as an app that keeps no secret (PKCE proves it).
    static func example(baseURL: URL, session: URLSession, public: Bool = false) -> TokenEndpointClient {
        let example = SpotifyStub.Client.example
        return TokenEndpointClient(
            tokenURL: baseURL.appendingPathComponent("api/token"), clientID: example.id,
            clientSecret: `public` ? nil : example.secret, session: session)
    }
}

extension RefreshingRequestClosure where Authentication == OAuth2Authentication {
    /// The closure every part of the walkthrough uses: the built-in OAuth 2.0 authentication,
    /// tokens in the shared store (a file, or Redis), only the Web API signed.
    static func walkthrough<Store: AuthenticationStore>(
        client: TokenEndpointClient, store: Store, timeline: Timeline?, tally: Tally
    ) -> RefreshingRequestClosure<OAuth2Authentication> where Store.Value == OAuth2Token {
        // The default options, also for tokens that live only seconds (--lifetime): the refresh
        // window counts only refreshes that a loop causes.
        var options = RefreshingRequestClosure<OAuth2Authentication>.Options()
        // Only the Web API gets the token; the token endpoint authenticates the client itself.
        options.requiresAuthentication = { $0.url?.path.hasPrefix("/v1/") == true }
        options.onEvent = { event in
            if case .refreshHeldRequests(let count, _) = event { tally.record(held: count) }
            timeline?.report(event)
        }
        return RefreshingRequestClosure(client: client, store: store, options: options) { _ in
            timeline?.log("the refresh token was refused: the user must log in again")
        }
    }
}

extension OAuth2Token {
    /// The same token as if its lifetime had passed.
    var expired: OAuth2Token {
        var token = self
        let lifetime = token.lifetime ?? 0
        token.issuedAt = Date().addingTimeInterval(-lifetime - 1)
        token.expiresAt = Date().addingTimeInterval(-1)
        return token
    }
}

extension FileAuthenticationStore {
    /// The token file's permission bits, for the walkthrough to show.
    var permissions: Int? {
        (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.posixPermissions]) as? Int
    }
}

/// A private temporary directory (mode 0700), removed at the end.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("refreshqueue-example-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        Cleanup.shared.register(directory: url)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
        Cleanup.shared.unregister(directory: url)
    }
}
