import Foundation
import RefreshQueue
import SpotifyStub
import TestSupport
import Testing
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every way a token endpoint fails, each against 1,000 concurrent requests through
/// `data(for:using:)`, with a matrix printed at the end: fault × (requests, outcome, token requests,
/// seconds, change of heap in use, change of resident memory).
///
/// The token endpoint is a proxy in front of the stub: the first token request gets the fault,
/// later ones reach the stub (so that the next healthy refresh can recover), and faults shaped like
/// a success alter the stub's real answer, so that any token that reaches the Web API is one the
/// stub issued. Checked for each fault: every request ends once; every error is typed and is the
/// one the fault calls for; no request reaches the Web API with an expired or foreign token (no
/// 401 there); the stored token is unchanged unless the fault means a new login; and the next
/// healthy refresh recovers. The heap in use grows by less than the largest answer a fault sends;
/// resident memory is printed but not checked: under the thread sanitizer it moved by -32 to +25
/// MiB per fault with the sanitizer's own records and the tests running beside this one.
@Suite("Fault matrix", .timeLimit(.minutes(5)))
struct FaultMatrixTests {
    static let requests = ProcessInfo.processInfo.environment["FAULT_MATRIX_REQUESTS"].flatMap(Int.init) ?? 1_000

    /// What the fault should do to the requests.
    enum Outcome: Sendable {
        /// Every request fails with an error that `matches`.
        case fails(@Sendable (any Error) -> Bool)
        /// Every request fails and the user must log in again: the store is cleared.
        case reLogin
        /// The fault does no harm: every request gets a 200.
        case succeeds
    }

    struct Fault: Sendable {
        let name: String
        /// The proxy's answer to the first token request, given the stub's real answer to it.
        let reply: @Sendable (_ real: LoopbackServer.Reply) -> LoopbackServer.Reply
        let outcome: Outcome
        /// Seconds the closure will not refresh after it (a Retry-After), before recovery is tried.
        var pause: TimeInterval = 0
        /// The client's own deadline for the token request. Short only for the fault that tests
        /// it: every other row must see its fault, not a deadline, even when a loaded machine takes
        /// seconds to have all the requests waiting for it.
        var requestTimeout: TimeInterval = 10
        /// The closure's deadline for the refresh; short only for the fault that tests it, likewise.
        var refreshTimeout: TimeInterval = 10
        /// Whether the stored token must stay as it was. A token that is valid but already stale is
        /// still saved: its refresh token may have been rotated by the same answer.
        var keepsStoredToken = true
    }

    @Test(.exclusive) func everyFaultFailsTheRequestsAsItShouldAndTheNextRefreshRecovers() async throws {
        let elsewhere = try LoopbackServer { _ in .answer(status: 200, headers: [:], body: Data()) }
        defer { elsewhere.stop() }
        var rows: [String] = []
        let only = ProcessInfo.processInfo.environment["FAULT_MATRIX_ONLY"]
        for fault in Self.faults(elsewhere: elsewhere) where only.map(fault.name.contains) ?? true {
            let row = try await run(fault)
            print("fault matrix: " + row)
            rows.append(row)
        }
        #expect(elsewhere.requests.isEmpty, "a redirect carried the token request to another host")
        let header = "fault | requests | outcome | token requests | seconds | heap in use | resident memory"
        print(([header, "---|---|---|---|---|---|---"] + rows).joined(separator: "\n"))
    }

    /// Runs one fault and returns its row of the matrix.
    private func run(_ fault: Fault) async throws -> String {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 60)
        defer { session.invalidateAndCancel() }
        // The fault is answered only once every request waits for it, so that none arrives after
        // the failure and starts a healthy refresh of its own.
        let allWaiting = DispatchSemaphore(value: 0)
        let proxy = try TokenProxy(stub: stub, fault: fault.reply) {
            _ = allWaiting.wait(timeout: .now() + 60)
        }
        defer { proxy.stop() }
        let example = SpotifyStub.Client.example
        let client = TokenEndpointClient(
            tokenURL: proxy.url, clientID: example.id, clientSecret: example.secret, session: session,
            requestTimeout: fault.requestTimeout)
        let code = try await StubHarness.authorizationCode(stub, session: session)
        var expired = try await TokenEndpointClient(
            tokenURL: stub.baseURL.appendingPathComponent("api/token"), clientID: example.id,
            clientSecret: example.secret, session: session
        ).exchange(code: code, redirectURI: example.redirectURIs[0])
        expired.expiresAt = Date().addingTimeInterval(-1)
        stub.expireAccessTokens()
        stub.resetCounters()
        let store = InMemoryAuthenticationStore(expired)
        let events = Protected<[String]>([])
        let closure = RefreshingRequestClosure(
            client: client,
            store: store,
            options: .init(
                refreshTimeout: fault.refreshTimeout,
                refreshWindow: .unlimited,
                onEvent: { event in
                    events.withLock { $0.append(event.description) }
                    if case .requestWaiting(let waiting) = event, waiting == Self.requests { allWaiting.signal() }
                }
            )
        )

        let heapBefore = HeapInUse.bytes()
        let residentBefore = ResidentMemory.bytes()
        #if canImport(Glibc) || canImport(Darwin)
        // Where the allocator tells, a figure of 0 means it was not read: the bound could not fail.
        #expect(heapBefore > 0, "no heap figure: the memory bound cannot fail")
        #endif
        let started = ProcessInfo.processInfo.systemUptime
        let me = URLRequest(url: stub.baseURL.appendingPathComponent("v1/me"))
        let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<Self.requests {
                group.addTask {
                    do {
                        let (_, response) = try await closure.data(for: me, using: session)
                        return .success((response as? HTTPURLResponse)?.statusCode ?? 0)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let seconds = ProcessInfo.processInfo.systemUptime - started
        let heap = HeapInUse.bytes() - heapBefore
        let resident = ResidentMemory.bytes() - residentBefore
        let tokenRequests = proxy.requests

        #expect(results.count == Self.requests, "\(fault.name): not every request ended")
        // One refresh per fault, never more: the fault itself, not a storm of retries.
        #expect(tokenRequests == 1, "\(fault.name): \(tokenRequests) token requests instead of one")
        // Bounded time: each request waits at most `refreshTimeout` (with room for a loaded machine
        // to start and finish the requests).
        #expect(seconds < fault.refreshTimeout + 20, "\(fault.name): the requests took \(seconds) s")
        // Bounded memory: less than the largest answer a fault sends (50 MB), which must never be held.
        #expect(heap < 40 << 20, "\(fault.name): the heap in use grew by \(heap >> 20) MiB")
        #expect(
            stub.counters.apiRequestsByStatus[401] == nil, "\(fault.name): an expired or foreign token reached the API")
        let failures = results.compactMap { result -> (any Error)? in
            if case .failure(let error) = result { return error }
            return nil
        }
        switch fault.outcome {
        case .fails(let matches):
            #expect(
                failures.count == Self.requests,
                "\(fault.name): \(Self.requests - failures.count) requests did not fail")
            let unexpected = failures.filter { !matches($0) }
            #expect(
                unexpected.isEmpty, "\(fault.name): unexpected errors, e.g. \(unexpected.first.map { "\($0)" } ?? "")")
            if fault.keepsStoredToken {
                #expect(store.load()?.accessToken == expired.accessToken, "\(fault.name): the stored token changed")
            }
        case .reLogin:
            #expect(failures.count == Self.requests)
            #expect(failures.allSatisfy { ($0 as? any RefreshFailure)?.requiresReauthentication == true })
            #expect(store.load() == nil, "\(fault.name): the dead token was kept")
        case .succeeds:
            #expect(results.allSatisfy { (try? $0.get()) == 200 }, "\(fault.name): not every request got a 200")
        }

        // The next healthy refresh recovers (after a new login, when the fault asked for one).
        if case .reLogin = fault.outcome {
            try store.save(
                try await client.exchange(
                    code: try await StubHarness.authorizationCode(stub, session: session),
                    redirectURI: example.redirectURIs[0]))
        }
        await waitForTheRefreshToEnd(events)
        // check-apple: 32-bit safe (the pause is at most 60 s: checked on the line below)
        if fault.pause > 0, fault.pause <= 60 { try await Task.sleep(nanoseconds: UInt64((fault.pause + 0.2) * 1e9)) }
        // A Retry-After longer than a test can wait (a day): recovery is for the app's next launch.
        let recovering = fault.pause > 60 ? RefreshingRequestClosure(client: client, store: store) : closure
        let (_, recovered) = try await recovering.data(for: me, using: session)
        #expect((recovered as? HTTPURLResponse)?.statusCode == 200, "\(fault.name): no recovery")

        let outcome = Dictionary(grouping: results.map(Self.describe), by: { $0 }).map { "\($1.count) × \($0)" }
            .sorted().joined(separator: ", ")
        return String(
            format: "%@ | %d | %@ | %d | %.2f | %+.1f MiB | %+.1f MiB", fault.name, Self.requests, outcome,
            tokenRequests, seconds, Double(heap) / 1_048_576, Double(resident) / 1_048_576)
    }

    /// Waits until the refresh the fault hit has ended one way or the other (a hang ends at the
    /// client's deadline), so that recovery starts a refresh of its own.
    private func waitForTheRefreshToEnd(_ events: Protected<[String]>) async {
        for _ in 0..<600 {
            let ended = events.current.contains {
                $0.hasPrefix("refresh failed") || $0.hasPrefix("refresh succeeded") || $0.hasPrefix("late refresh")
            }
            if ended { return }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    /// The outcome in a few words: the status, or the error's case and what it carries.
    private static func describe(_ result: Result<Int, any Error>) -> String {
        switch result {
        case .success(let status): return "HTTP \(status)"
        case .failure(let underlying as OAuth2Error): return describe(underlying)
        case .failure(RefreshQueueError.refreshTimedOut): return "refreshTimedOut"
        case .failure(RefreshQueueError.excessiveRefresh): return "excessiveRefresh"
        case .failure(RefreshQueueError.notAuthenticated): return "notAuthenticated"
        case .failure(let error as RefreshQueueError): return String(String(describing: error).prefix(60))
        case .failure(let error): return "\(type(of: error))"
        }
    }

    private static func describe(_ error: OAuth2Error) -> String {
        switch error {
        case .server(let status, let retryAfter):
            return ".server \(status)" + (retryAfter.map { String(format: ", Retry-After %.0f s", $0) } ?? "")
        case .tokenEndpoint(let answer): return ".tokenEndpoint \(answer.code.rawValue)"
        case .malformedResponse: return ".malformedResponse"
        case .responseTooLarge: return ".responseTooLarge"
        case .unsupportedTokenType(let type): return ".unsupportedTokenType \(type)"
        case .noRefreshToken: return ".noRefreshToken"
        case .transport(let error): return ".transport URLError \(error.code.rawValue)"
        case .insecureEndpoint(let host): return ".insecureEndpoint \(host)"
        }
    }

    // MARK: - The faults

    static func faults(elsewhere: LoopbackServer) -> [Fault] {
        @Sendable func json(_ status: Int, _ body: String, _ headers: [String: String] = [:]) -> LoopbackServer.Reply {
            .answer(
                status: status, headers: ["Content-Type": "application/json"].merging(headers) { $1 },
                body: Data(body.utf8))
        }
        /// The stub's real token answer with `change` applied to its JSON.
        @Sendable func altered(_ change: @escaping @Sendable (inout [String: Any]) -> Void)
            -> @Sendable (LoopbackServer.Reply) -> LoopbackServer.Reply
        {
            { real in
                guard case .answer(let status, let headers, let body) = real,
                    var object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
                else { return real }
                change(&object)
                let data = (try? JSONSerialization.data(withJSONObject: object)) ?? body
                return .answer(status: status, headers: headers, body: data)
            }
        }
        @Sendable func server(_ status: Int, retryAfter expected: ClosedRange<TimeInterval>?) -> Outcome {
            .fails { error in
                guard case OAuth2Error.server(status, let retryAfter) = error else {
                    // Requests arriving during the Retry-After fail the same way, at once.
                    return false
                }
                guard let expected else { return retryAfter == nil }
                return retryAfter.map(expected.contains) ?? false
            }
        }
        let malformed: @Sendable (any Error) -> Bool = { error in
            guard case OAuth2Error.malformedResponse = error else { return false }
            return true
        }
        let transport: @Sendable (any Error) -> Bool = { error in
            guard case OAuth2Error.transport = error else { return false }
            return true
        }
        /// An HTTP-date `seconds` from the moment the fault is answered.
        @Sendable func httpDate(in seconds: TimeInterval) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter.string(from: Date().addingTimeInterval(seconds))
        }
        return [
            Fault(
                name: "500", reply: { _ in json(500, #"{"error":"server_error"}"#) },
                outcome: server(500, retryAfter: nil)),
            Fault(
                name: "503, Retry-After 1 s", reply: { _ in json(503, "{}", ["Retry-After": "1"]) },
                outcome: server(503, retryAfter: 1...1), pause: 1),
            Fault(
                name: "503, Retry-After a date", reply: { _ in json(503, "{}", ["Retry-After": httpDate(in: 2)]) },
                outcome: server(503, retryAfter: 0...3), pause: 3),
            Fault(
                name: "503, Retry-After huge", reply: { _ in json(503, "{}", ["Retry-After": "9223372036854775807"]) },
                outcome: server(503, retryAfter: 86_400...86_400), pause: 86_400),
            Fault(
                name: "503, Retry-After garbage", reply: { _ in json(503, "{}", ["Retry-After": "soon!!"]) },
                outcome: server(503, retryAfter: nil)),
            Fault(
                name: "invalid_grant", reply: { _ in json(400, #"{"error":"invalid_grant"}"#) }, outcome: .reLogin),
            Fault(
                name: "invalid_client", reply: { _ in json(400, #"{"error":"invalid_client"}"#) },
                outcome: .fails { error in
                    guard case OAuth2Error.tokenEndpoint(let answer) = error else {
                        return false
                    }
                    return answer.code == .invalidClient
                }),
            Fault(name: "invalid JSON", reply: { _ in json(200, #"{"access_token":"#) }, outcome: .fails(malformed)),
            Fault(name: "a JSON array", reply: { _ in json(200, "[1, 2, 3]") }, outcome: .fails(malformed)),
            Fault(
                name: "no access_token", reply: altered { $0["access_token"] = nil }, outcome: .fails(malformed)),
            Fault(
                name: "token_type DPoP", reply: altered { $0["token_type"] = "DPoP" },
                outcome: .fails { error in
                    guard case OAuth2Error.unsupportedTokenType("DPoP") = error else {
                        return false
                    }
                    return true
                }),
            Fault(name: "expires_in -60", reply: altered { $0["expires_in"] = -60 }, outcome: .fails(malformed)),
            Fault(
                name: "expires_in 0", reply: altered { $0["expires_in"] = 0 },
                outcome: .fails {
                    ($0 as? RefreshQueueError).map { "\($0)" }?.contains("Too many token refreshes") == true
                },
                keepsStoredToken: false),
            Fault(name: "expires_in 1e308", reply: altered { $0["expires_in"] = 1e308 }, outcome: .succeeds),
            Fault(
                name: "expires_in \"soon\"", reply: altered { $0["expires_in"] = "soon" }, outcome: .fails(malformed)),
            Fault(
                name: "a CR/LF access token", reply: altered { $0["access_token"] = "abc\r\nX-Injected: 1" },
                outcome: .fails(malformed)),
            Fault(
                name: "a body cut short",
                reply: { _ in .cutShort(status: 200, body: Data(#"{"access_token":"at","token_type":"Bearer"}"#.utf8))
                },
                outcome: .fails(transport)),
            Fault(name: "connection reset", reply: { _ in .reset }, outcome: .fails(transport)),
            Fault(
                name: "a body dripped past the deadline", reply: { _ in .drip(interval: 0.05) },
                outcome: .fails(transport), requestTimeout: 3),
            Fault(
                name: "a hang past refreshTimeout", reply: { _ in .hang },
                outcome: .fails {
                    ($0 as? RefreshQueueError).map { "\($0)" }?.contains("did not complete in time") == true
                },
                requestTimeout: 30, refreshTimeout: 3),
            Fault(
                name: "a 50 MB body", reply: { _ in .huge(bytes: 50 << 20) },
                outcome: .fails { error in
                    guard case OAuth2Error.responseTooLarge = error else {
                        return false
                    }
                    return true
                }),
            Fault(
                name: "a redirect to another host",
                reply: { _ in
                    .answer(
                        status: 307, headers: ["Location": "http://localhost:\(elsewhere.port)/api/token"], body: Data()
                    )
                }, outcome: server(307, retryAfter: nil)),
        ]
    }
}

/// A token endpoint in front of the stub's: the first request gets the fault (made from the stub's
/// real answer to it, and sent once `beforeFault` returns), later ones the stub's answers.
final class TokenProxy: Sendable {
    private let server: LoopbackServer

    var url: URL { server.baseURL.appendingPathComponent("api/token") }
    /// Token requests received.
    var requests: Int { server.requests.count }

    init(
        stub: SpotifyStub, fault: @escaping @Sendable (LoopbackServer.Reply) -> LoopbackServer.Reply,
        beforeFault: @escaping @Sendable () -> Void = {}
    ) throws {
        let armed = Protected(true)
        let target = stub.baseURL.appendingPathComponent("api/token")
        server = try LoopbackServer { request in
            let real = TokenProxy.forward(request, to: target)
            let first = armed.withLock { armed in
                defer { armed = false }
                return armed
            }
            guard first else { return real }
            beforeFault()
            return fault(real)
        }
    }

    func stop() {
        server.stop()
    }

    /// The stub's answer to `request`, fetched on this (the proxy's) thread.
    private static func forward(_ request: LoopbackServer.Request, to target: URL) -> LoopbackServer.Reply {
        var forwarded = URLRequest(url: target)
        forwarded.httpMethod = request.method
        for name in ["authorization", "content-type", "accept"] {
            if let value = request.headers[name] { forwarded.setValue(value, forHTTPHeaderField: name) }
        }
        forwarded.httpBody = request.body
        let answer = Protected<LoopbackServer.Reply>(.reset)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: forwarded) { data, response, _ in
            if let http = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (key, value) in http.allHeaderFields {
                    if let key = key as? String, let value = value as? String, key.lowercased() != "content-length" {
                        headers[key] = value
                    }
                }
                answer.withLock { $0 = .answer(status: http.statusCode, headers: headers, body: data ?? Data()) }
            }
            done.signal()
        }.resume()
        done.wait()
        return answer.current
    }
}
