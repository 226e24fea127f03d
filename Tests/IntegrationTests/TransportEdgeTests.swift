import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of `operation`, or `nil` when it has not ended within `seconds` (it is then
/// cancelled, and left behind if it does not notice): a call that never returns fails its test
/// instead of hanging it.
private func within<T: Sendable>(
    _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error>? {
    let pending = Protected<CheckedContinuation<Result<T, any Error>?, Never>?>(nil)
    let finish: @Sendable (Result<T, any Error>?) -> Void = { outcome in
        let continuation = pending.withLock { held -> CheckedContinuation<Result<T, any Error>?, Never>? in
            defer { held = nil }
            return held
        }
        continuation?.resume(returning: outcome)
    }
    return await withCheckedContinuation { continuation in
        pending.withLock { $0 = continuation }
        let task = Task {
            do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            task.cancel()
            finish(nil)
        }
    }
}

/// A token that looks valid until the server says otherwise; each refresh appends `+`.
private struct RejectedAuthentication: RefreshableAuthentication {
    let accessToken: String
    var isRefreshNeeded: Bool { false }

    func refresh() -> Future<RejectedAuthentication> {
        Future(value: RejectedAuthentication(accessToken: accessToken + "+"))
    }

    static func find() -> RejectedAuthentication? { nil }
}

/// A token that needs a refresh once `stale` is set, and whose refresh ends only when the test
/// releases it through `gate`.
private struct GatedAuthentication: RefreshableAuthentication {
    let accessToken: String
    let stale: Protected<Bool>
    let gate: Protected<(@Sendable (Result<GatedAuthentication, any Error>) -> Void)?>

    var isRefreshNeeded: Bool { accessToken == "old" && stale.current }

    func refresh() -> Future<GatedAuthentication> {
        Future { complete in gate.withLock { $0 = complete } }
    }

    /// Ends the refresh with a new token.
    func release() {
        let complete = gate.withLock { held in
            defer { held = nil }
            return held
        }
        complete?(.success(GatedAuthentication(accessToken: "new", stale: stale, gate: gate)))
    }

    static func find() -> GatedAuthentication? { nil }
}

/// `data(for:using:)` and `RedirectSigningDelegate` where URLSession on Linux falls short: a 401
/// with a `Basic` challenge, an unenforced resource timeout, a late redirect decision.
@Suite("URLSession adapter edge cases", .timeLimit(.minutes(2)))
struct TransportEdgeTests {
    /// A 401 with a `Basic` challenge (an API that also takes passwords, or a proxy in front of
    /// it): the token is refreshed, the request sent once more, and the answer returned. On Linux,
    /// URLSession left alone waits forever for a credential, whatever the request timeout.
    @Test(arguments: ["Basic realm=\"api\"", "Bearer realm=\"api\", Basic realm=\"legacy\""])
    func a401WithABasicChallengeIsRetriedOnceAndReturned(challenge: String) async throws {
        let server = try LoopbackServer { _ in
            .answer(status: 401, headers: ["WWW-Authenticate": challenge], body: Data("rejected".utf8))
        }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<RejectedAuthentication>(
            find: { RejectedAuthentication(accessToken: "first") })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let outcome = await within(60) {
            try await closure.data(for: URLRequest(url: server.baseURL.appendingPathComponent("v1/me")), using: session)
        }
        let (_, response) = try #require(try outcome?.get(), "data(for:using:) never returned")
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(server.requests.map { $0.headers["authorization"] } == ["Bearer first", "Bearer first+"])
    }

    /// A 403 says the token is valid but not allowed this (a missing scope): no refresh, no
    /// retry, the answer as it came. Its neighbour, a 401, is retried once (above).
    @Test func a403IsReturnedWithoutARefreshOrARetry() async throws {
        let server = try LoopbackServer { _ in
            .answer(status: 403, headers: ["WWW-Authenticate": "Bearer error=\"insufficient_scope\""], body: Data())
        }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<RejectedAuthentication>(
            find: { RejectedAuthentication(accessToken: "first") })
        let outcome = await within(60) {
            try await closure.data(for: URLRequest(url: server.baseURL.appendingPathComponent("v1/me")), using: .shared)
        }
        let (_, response) = try #require(try outcome?.get(), "data(for:using:) never returned")
        #expect((response as? HTTPURLResponse)?.statusCode == 403)
        #expect(server.requests.map { $0.headers["authorization"] } == ["Bearer first"])
    }

    /// The retry after a `Basic`-challenged 401 succeeds: its answer and body come back.
    @Test func theRetryAfterABasicChallengeReturnsItsAnswer() async throws {
        let server = try LoopbackServer { request in
            guard request.headers["authorization"] == "Bearer first+" else {
                return .answer(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"api\""], body: Data())
            }
            return .answer(status: 200, headers: [:], body: Data("me".utf8))
        }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<RejectedAuthentication>(
            find: { RejectedAuthentication(accessToken: "first") })
        let outcome = await within(60) {
            try await closure.data(for: URLRequest(url: server.baseURL.appendingPathComponent("v1/me")), using: .shared)
        }
        let (data, response) = try #require(try outcome?.get(), "data(for:using:) never returned")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "me")
        #expect(server.requests.count == 2)
    }

    /// The session's `timeoutIntervalForResource` bounds each transfer, also on Linux, whose
    /// URLSession does not enforce it: a body dripped a byte at a time (never idle long enough for
    /// the request timeout) does not keep the call running.
    @Test func theSessionsResourceTimeoutBoundsATransfer() async throws {
        let server = try LoopbackServer { _ in .drip(interval: 0.2) }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<RejectedAuthentication>(
            find: { RejectedAuthentication(accessToken: "first") })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 2
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let outcome = await within(60) {
            try await closure.data(for: URLRequest(url: server.baseURL.appendingPathComponent("v1/me")), using: session)
        }
        let result = try #require(outcome, "data(for:using:) ran past the resource timeout")
        #expect(throws: URLError(.timedOut)) { try result.get() }
    }

    /// One timer watches every transfer: a transfer with a shorter resource timeout, started while
    /// a longer one is watched, still ends at its own limit, and the longer one at its own.
    @Test func aShorterResourceTimeoutStartedAfterALongerOneEndsFirst() async throws {
        let arrived = Completions<Int>()
        let arrivals = Protected(0)
        let server = try LoopbackServer { _ in
            let number = arrivals.withLock { count in
                count += 1
                return count
            }
            arrived.record(number, number)
            return .drip(interval: 0.2)
        }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<RejectedAuthentication>(
            find: { RejectedAuthentication(accessToken: "first") })
        func session(resourceTimeout: TimeInterval) -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 30
            configuration.timeoutIntervalForResource = resourceTimeout
            return URLSession(configuration: configuration)
        }
        // The long limit leaves room for this task to start the short transfer late: on a loaded
        // machine a task may wait over ten seconds for a thread, and the short transfer must still
        // start, and end, well before the long one's limit.
        let (long, short) = (session(resourceTimeout: 30), session(resourceTimeout: 1))
        defer {
            long.invalidateAndCancel()
            short.invalidateAndCancel()
        }
        let request = URLRequest(url: server.baseURL.appendingPathComponent("v1/me"))
        let start = ProcessInfo.processInfo.systemUptime
        let ended = Completions<TimeInterval>()
        let longCall = Task {
            defer { ended.record(0, ProcessInfo.processInfo.systemUptime - start) }
            return try await closure.data(for: request, using: long)
        }
        // The long transfer is under way (the server has its request) before the short one starts.
        #expect(await arrived.wait(for: 1, timeout: 30))
        let shortCall = Task {
            defer { ended.record(1, ProcessInfo.processInfo.systemUptime - start) }
            return try await closure.data(for: request, using: short)
        }
        #expect(await ended.wait(for: 2, timeout: 60), "a transfer ran past its resource timeout")
        await #expect(throws: URLError(.timedOut)) { try await shortCall.value }
        await #expect(throws: URLError(.timedOut)) { try await longCall.value }
        let (longTook, shortTook) = (ended.results[0] ?? 0, ended.results[1] ?? 0)
        #expect(shortTook + 2 < longTook, "the short transfer waited for the long one's deadline")
        #expect(longTook >= 30)
    }

    #if canImport(FoundationNetworking)
    /// On Linux, URLSession times a task out while it waits for its redirect decision, and a
    /// decision that arrives after that stops the process ("Received callback for HTTP
    /// redirection, but we're not waiting for it"). A redirect whose signing waits for a refresh
    /// is therefore not followed (the task gets the redirect itself) once the wait nears the
    /// request timeout.
    @Test func theRedirectDelegateDecidesBeforeTheRequestTimeout() async throws {
        let authentication = GatedAuthentication(accessToken: "old", stale: Protected(false), gate: Protected(nil))
        defer { authentication.release() }
        let closure = RefreshingRequestClosure<GatedAuthentication>(
            options: .init(refreshTimeout: 60), find: { authentication })
        let start = URL(string: "https://api.example.test/start")!
        let signed = try await closure.authorize(URLRequest(url: start))
        authentication.stale.withLock { $0 = true }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 2
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: signed)
        var next = signed
        next.url = URL(string: "https://api.example.test/landing")
        let response = HTTPURLResponse(
            url: start, statusCode: 302, httpVersion: nil, headerFields: ["Location": "/landing"])!
        let decided = Completions<URLRequest?>()
        RedirectSigningDelegate(closure).urlSession(
            session, task: task, willPerformHTTPRedirection: response, newRequest: next
        ) { decided.record(0, $0) }
        #expect(await decided.wait(for: 1, timeout: 15))
        #expect(decided.results[0] == .some(nil))
        #expect(decided.duplicates.isEmpty)
    }

    /// The same through a real session: the task ends with the redirect response, and the process
    /// survives the refresh that ends afterwards.
    @Test func aRedirectWaitingForASlowRefreshEndsTheTaskWithTheRedirect() async throws {
        let authentication = GatedAuthentication(accessToken: "old", stale: Protected(false), gate: Protected(nil))
        let server = try LoopbackServer { request in
            guard request.path.hasPrefix("/start") else {
                return .answer(status: 200, headers: [:], body: Data("landed".utf8))
            }
            authentication.stale.withLock { $0 = true }
            return .answer(status: 302, headers: ["Location": "/landing"], body: Data())
        }
        defer { server.stop() }
        let closure = RefreshingRequestClosure<GatedAuthentication>(
            options: .init(refreshTimeout: 60), find: { authentication })
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 2
        let session = URLSession(
            configuration: configuration, delegate: RedirectSigningDelegate(closure), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let signed = try await closure.authorize(URLRequest(url: server.baseURL.appendingPathComponent("start")))
        let outcome = await within(30) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                session.dataTask(with: signed) { _, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else {
                        continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
                    }
                }.resume()
            }
        }
        #expect(try outcome?.get() == 302)
        #expect(server.requests.map(\.path) == ["/start"])
        authentication.release()
        // The refresh ended: the closure signs with its token, and nothing answered the task late.
        let after = try await closure.authorize(URLRequest(url: server.baseURL.appendingPathComponent("again")))
        #expect(after.value(forHTTPHeaderField: "Authorization") == "Bearer new")
    }
    #endif
}
