import Foundation
import RefreshQueue
import RefreshQueueRedis

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fires many requests to `/v1/me` through three kinds of code: a Moya-shaped provider,
/// completion handlers, and async/await; as many at once as the session has connections, the
/// next one as soon as one is answered.
struct Burst {
    /// The most requests in flight at once, as many as the session's connections.
    static let concurrency = 64

    let closure: RefreshingRequestClosure<OAuth2Authentication>
    let baseURL: URL
    let session: URLSession
    let tally: Tally
    /// The most requests this burst keeps in flight: ``concurrency``, or its share of it in a
    /// worker process.
    var inFlightLimit = Burst.concurrency

    @discardableResult
    func run(requests: Int, timeline: Timeline?) async -> Tally {
        let provider = Provider(
            baseURL: baseURL, session: session,
            requestClosure: closure.requestClosure { ProviderError.underlying($0) })
        let split = Split(total: requests)
        let inFlight = min(requests, inFlightLimit)
        timeline?.log(
            "firing \(requests) requests to /v1/me, \(inFlight == requests ? "all at once" : "\(inFlight) at a time"): "
                + "\(split.provider) through a Moya-shaped provider, \(split.callbacks) with callbacks, "
                + "\(split.async) with async/await")
        let next = NextIndex(total: requests)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while let index = next.take() {
                        switch split.kind(of: index) {
                        case .provider: await viaProvider(provider, tally: tally)
                        case .callbacks: await viaCallbacks(tally: tally)
                        case .async: await viaAsync(tally: tally)
                        }
                    }
                }
            }
        }
        return tally
    }

    /// A worker process of `--processes` or `--fleet`: the same burst against the parent's server
    /// and token (file or Redis key); its result goes to the parent as one line on standard output.
    static func runWorker(
        _ worker: Options.Worker, requests: Int, inFlight: Int, lifetime: TimeInterval, publicClient: Bool
    ) async -> Bool {
        let session = URLSession.walkthrough(concurrency: min(requests, inFlight))
        defer { session.invalidateAndCancel() }
        let tokenSession = URLSession.tokenRequests()
        defer { tokenSession.invalidateAndCancel() }
        do {
            let client = TokenEndpointClient.example(
                baseURL: worker.baseURL, session: tokenSession, public: publicClient)
            let tally = Tally()
            let closure: RefreshingRequestClosure<OAuth2Authentication>
            switch worker.token {
            case .file(let url):
                let store = try FileAuthenticationStore<OAuth2Token>(fileURL: url)
                closure = .walkthrough(client: client, store: store, timeline: nil, tally: tally)
            case .redis(let port, let key):
                let password = ProcessInfo.processInfo.environment[Walkthrough.redisPasswordVariable]
                let store = RedisAuthenticationStore<OAuth2Token>(
                    key: key, configuration: RedisConfiguration(port: port, password: password))
                closure = .walkthrough(client: client, store: store, timeline: nil, tally: tally)
            }
            var burst = Burst(closure: closure, baseURL: worker.baseURL, session: session, tally: tally)
            burst.inFlightLimit = inFlight
            await burst.run(requests: requests, timeline: nil)
            say(WorkerProcess.resultLine(index: worker.index, tally: tally))
            // A refresh ahead this process started may still run, holding the shared lock: let it
            // end and save before the process exits. Gone first, it would take the rotated refresh
            // token with it, and the next process would send the spent one (a reuse the server
            // answers by revoking the session).
            try? await closure.refreshIfNeeded()
            return tally.snapshot.errors.isEmpty
        } catch {
            say("error: \(error)")
            return false
        }
    }

    /// A Moya-shaped provider. After a 401 (a token that expired in flight), the app tells the
    /// closure which token was rejected, then requests the target once more: the request closure
    /// signs it with the token that replaced it.
    private func viaProvider(_ provider: Provider, tally: Tally) async {
        let closure = self.closure
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let record: @Sendable (Result<ProviderResponse, ProviderError>) -> Void = { result in
                switch result {
                case .success(let answer): tally.record(status: answer.statusCode)
                case .failure(let error): tally.record(error: error)
                }
                done.resume()
            }
            provider.request(.me) { result in
                guard case .success(let answer) = result, answer.statusCode == 401 else { return record(result) }
                closure.reauthorize(answer.request, response: answer.response) { renewed in
                    switch renewed {
                    case .success: provider.request(.me, completion: record)
                    case .failure(let error): record(.failure(.underlying(error)))
                    }
                }
            }
        }
    }

    /// Code that predates async/await: a completion handler, then a data task; after a 401, the
    /// request as it was sent goes to `reauthorize` and what it returns is sent once more.
    private func viaCallbacks(tally: Tally) async {
        let session = self.session
        let closure = self.closure
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let record: @Sendable (Result<Int, any Error>) -> Void = { outcome in
                switch outcome {
                case .success(let status): tally.record(status: status)
                case .failure(let error): tally.record(error: error)
                }
                done.resume()
            }
            closure.authorize(URLRequest(url: baseURL.appendingPathComponent("v1/me"))) { result in
                switch result {
                case .failure(let error):
                    record(.failure(error))
                case .success(let signed):
                    session.send(signed) { outcome in
                        guard case .success((401, let response)) = outcome else { return record(outcome.map(\.status)) }
                        closure.reauthorize(signed, response: response) { retry in
                            switch retry {
                            case .success(let again): session.send(again) { record($0.map(\.status)) }
                            case .failure(let error): record(.failure(error))
                            }
                        }
                    }
                }
            }
        }
    }

    /// async/await with the URLSession adapter: one retry should a token expire in flight.
    private func viaAsync(tally: Tally) async {
        do {
            let request = URLRequest(url: baseURL.appendingPathComponent("v1/me"))
            let (_, response) = try await closure.data(for: request, using: session)
            tally.record(status: (response as? HTTPURLResponse)?.statusCode ?? 0)
        } catch {
            tally.record(error: error)
        }
    }
}

/// Hands out request numbers to the workers of a burst, each once.
final class NextIndex: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private let total: Int

    init(total: Int) {
        self.total = total
    }

    func take() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard next < total else { return nil }
        defer { next += 1 }
        return next
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

extension URLSession {
    /// Ephemeral (nothing cached or stored), enough connections for the burst, short timeouts,
    /// redirects and authentication challenges left to the walkthrough.
    static func walkthrough(concurrency: Int) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = max(1, concurrency)
        configuration.timeoutIntervalForRequest = 15
        return URLSession(configuration: configuration, delegate: WalkthroughSessionDelegate(), delegateQueue: nil)
    }

    /// A session of its own for the token endpoint: with the API's, a refresh would queue behind
    /// every request already waiting for one of its connections (the stub serves both on one
    /// host), and with short-lived tokens the current one could expire before the refresh ahead
    /// ends.
    static func tokenRequests() -> URLSession {
        walkthrough(concurrency: 2)
    }
}

extension URLSession {
    /// Sends `request` with a data task; `completion` gets the status and the response.
    func send(
        _ request: URLRequest,
        completion: @escaping @Sendable (Result<(status: Int, response: HTTPURLResponse?), any Error>) -> Void
    ) {
        dataTask(with: request) { _, response, error in
            if let error {
                completion(.failure(error))
            } else {
                let http = response as? HTTPURLResponse
                completion(.success((http?.statusCode ?? 0, http)))
            }
        }.resume()
    }

    /// A data task, awaited: `data(for:)` itself needs iOS 15 / macOS 12, newer than the package.
    func response(to request: URLRequest) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            dataTask(with: request) { data, response, error in
                if let response {
                    continuation.resume(returning: (data ?? Data(), response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}

/// Refuses redirects, so that the walkthrough can read `/authorize`'s answer itself, and
/// authentication challenges.
final class WalkthroughSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    /// On Linux, URLSession never completes a request answered `401` with
    /// `WWW-Authenticate: Basic` (as a token endpoint answers a bad client secret) unless the
    /// delegate settles the challenge.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.rejectProtectionSpace, nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
