import Foundation
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub fault injection", .timeLimit(.minutes(5)))
struct SpotifyStubFaultTests {
    /// A login, then `fault` injected for the next refresh, which is sent on a session of its own
    /// (a fresh connection) with the given request timeout.
    ///
    /// A fresh connection matters on Linux: when a *reused* connection dies without an answer,
    /// libcurl retries on a new connection and corelibs then stalls until the request timeout.
    private func refreshWithFault(_ fault: Fault, timeout: TimeInterval = 5) async throws
        -> (stub: SpotifyStub, session: URLSession, refreshToken: String, result: Result<StubHarness.Exchange, Error>)
    {
        let stub = try StubHarness.startedStub()
        let session = StubHarness.makeSession()
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)
        stub.injectFaults(fault)
        let faultSession = StubHarness.makeSession(timeout: timeout)
        defer { faultSession.invalidateAndCancel() }
        let result: Result<StubHarness.Exchange, Error>
        do {
            result = .success(try await StubHarness.refresh(stub, refreshToken, session: faultSession))
        } catch {
            result = .failure(error)
        }
        return (stub, session, refreshToken, result)
    }

    @Test func internalServerErrorIs500AndOnlyAffectsOneRequest() async throws {
        let (stub, session, refreshToken, result) = try await refreshWithFault(.internalServerError)
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        let exchange = try result.get()
        let next = try await StubHarness.refresh(stub, refreshToken, session: session)

        #expect(exchange.status == 500)
        #expect(exchange.json?["error"] as? String == "server_error")
        #expect(next.status == 200)
        #expect(stub.counters.faultsInjected == 1)
        #expect(stub.counters.tokenRequests == 3)
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test func serviceUnavailableIs503WithRetryAfter() async throws {
        let (stub, session, _, result) = try await refreshWithFault(.serviceUnavailable(retryAfter: 7))
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        let exchange = try result.get()

        #expect(exchange.status == 503)
        #expect(exchange.header("Retry-After") == "7")
    }

    @Test func invalidGrantRejectsEvenAValidRefreshToken() async throws {
        let (stub, session, refreshToken, result) = try await refreshWithFault(.invalidGrant)
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        let exchange = try result.get()
        let next = try await StubHarness.refresh(stub, refreshToken, session: session)

        #expect(exchange.status == 400)
        #expect(exchange.json?["error"] as? String == "invalid_grant")
        #expect(exchange.json?["error_description"] != nil)
        #expect(next.status == 200)
    }

    @Test func malformedJSONIs200WithABodyThatIsNotJSON() async throws {
        let (stub, session, _, result) = try await refreshWithFault(.malformedJSON)
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        let exchange = try result.get()

        #expect(exchange.status == 200)
        #expect(exchange.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(!exchange.body.isEmpty)
        #expect((try? JSONSerialization.jsonObject(with: exchange.body)) == nil)
    }

    @Test(arguments: [Fault.truncatedBody, .closeWithoutResponse])
    func connectionFaultsMakeURLSessionFail(fault: Fault) async throws {
        let (stub, session, refreshToken, result) = try await refreshWithFault(fault)
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        #expect(throws: (any Error).self) { try result.get() }
        if fault == .closeWithoutResponse, case .failure(let error) = result {
            #expect((error as? URLError)?.code == .networkConnectionLost)
        }
        // Only the one request was affected.
        let next = try await StubHarness.refresh(stub, refreshToken, session: session)
        #expect(next.status == 200)
        #expect(stub.counters.faultsInjected == 1)
    }

    @Test func truncatedBodyPromisesMoreThanItSends() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.injectFaults(.truncatedBody)
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send(StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=x"))
        let bytes = try client.readUntilClosed()

        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        let lengthLine = parts[0].components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        let declared = try #require(
            lengthLine.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) })
        #expect(parts.count == 2 && parts[1].utf8.count < declared)
        #expect(parts.count == 2 && !parts[1].isEmpty)
    }

    @Test func closeWithoutResponseSendsNothingAndResetsTheConnection() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.injectFaults(.closeWithoutResponse)
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send(StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=x"))

        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test(.exclusive) func hangNeverAnswersSoTheClientTimesOut() async throws {
        let (stub, session, _, result) = try await refreshWithFault(.hang, timeout: 0.5)
        defer { stub.stop() }
        defer { session.invalidateAndCancel() }

        #expect(throws: (any Error).self) { try result.get() }
        if case .failure(let error) = result {
            #expect((error as? URLError)?.code == .timedOut)
        }
    }

    @Test func aClientGivingUpReleasesAHangingRequest() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.injectFaults(.hang)
        let client = try StubHarness.RawClient(port: stub.port)
        try client.send(StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=x"))
        #expect(await StubHarness.eventually { stub.counters.tokenRequests == 1 })
        #expect(stub.counters.liveConnections == 1)

        client.close()

        #expect(await StubHarness.eventually { stub.counters.liveConnections == 0 })
    }

    @Test func stopReleasesAHangingRequest() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.injectFaults(.hang)
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        try client.send(StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=x"))
        #expect(await StubHarness.eventually { stub.counters.tokenRequests == 1 })

        stub.stop()

        #expect(stub.counters.liveConnections == 0)
        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test func faultsApplyInInjectionOrderToTheNextRequests() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)
        stub.injectFaults(.internalServerError, count: 2)
        stub.injectFaults(.serviceUnavailable(retryAfter: 1))
        stub.injectFaults(.invalidGrant, count: 0)

        var statuses: [Int] = []
        for _ in 0..<4 {
            statuses.append(try await StubHarness.refresh(stub, refreshToken, session: session).status)
        }

        #expect(statuses == [500, 500, 503, 200])
        #expect(stub.counters.faultsInjected == 3)
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test(.exclusive) func tokenLatencyDelaysTheAnswerButTheRequestIsCountedAtOnce() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)
        stub.tokenLatency = 0.5
        let started = Date()

        async let refreshed = StubHarness.refresh(stub, refreshToken, session: session)
        // Watched on a thread of its own: the grant comes 0.5 s after the request is counted, and
        // a task polling for the count can be resumed later than that on a loaded machine.
        let whileWaiting = await onAThreadOfItsOwn { () -> Counters? in
            var seen = Counters()
            guard
                uptimeWhen({
                    seen = stub.counters
                    return seen.tokenRequests == 2
                }) != nil
            else { return nil }
            return seen
        }
        let exchange = try await refreshed

        #expect(exchange.status == 200)
        #expect(Date().timeIntervalSince(started) >= 0.5)
        #expect(whileWaiting?.tokenRequests == 2)
        #expect(whileWaiting?.refreshTokenGrants == 0)
        #expect(stub.counters.refreshTokenGrants == 1)
    }

    @Test(.exclusive, .timeLimit(.minutes(5))) func latencyDoesNotBlockOtherConnections() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        // Longer than the time limit: a blocked connection would fail the test, not slow it.
        stub.tokenLatency = 600
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let slow = try StubHarness.RawClient(port: stub.port)
        defer { slow.close() }
        try slow.send(StubHarness.rawTokenRequest("grant_type=refresh_token&refresh_token=x"))
        #expect(await StubHarness.eventually { stub.counters.tokenRequests == 1 })
        let me = try await StubHarness.get("/v1/me", on: stub, session: session)

        #expect(me.status == 401)
    }

    @Test func randomFaultsHitTheirShareOfTokenRequestsAndReplayFromTheirSeed() async throws {
        let faults: [Fault] = [.internalServerError, .serviceUnavailable(retryAfter: 0), .malformedJSON]
        var statusesPerRun: [[Int]] = []
        for _ in 0..<2 {
            let stub = try StubHarness.startedStub()
            defer { stub.stop() }
            let session = StubHarness.makeSession()
            defer { session.invalidateAndCancel() }
            let refreshToken = try #require(try await StubHarness.login(stub, session: session).refreshToken)
            stub.randomFaults = SpotifyStub.RandomFaults(probability: 0.3, faults: faults, seed: 42)
            var statuses: [Int] = []
            for _ in 0..<200 {
                let exchange = try await StubHarness.refresh(stub, refreshToken, session: session)
                // A 200 without a token is the malformed answer: -1.
                statuses.append(exchange.status == 200 && exchange.json?["access_token"] == nil ? -1 : exchange.status)
            }
            let counters = stub.counters
            #expect(counters.faultsInjected == statuses.count { $0 != 200 })
            #expect(counters.refreshTokenGrants == statuses.count { $0 == 200 })
            #expect((30...90).contains(counters.faultsInjected), "\(counters.faultsInjected) of 200")
            #expect(Set(statuses) == [200, 500, 503, -1])
            statusesPerRun.append(statuses)
        }
        #expect(statusesPerRun[0] == statusesPerRun[1])
    }

    @Test func queuedFaultsComeBeforeRandomOnesAndProbabilityZeroInjectsNone() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let refreshToken = try #require(try await StubHarness.login(stub, session: session).refreshToken)
        stub.randomFaults = SpotifyStub.RandomFaults(probability: 1, faults: [.internalServerError])
        stub.injectFaults(.invalidGrant)
        #expect(try await StubHarness.refresh(stub, refreshToken, session: session).status == 400)
        #expect(try await StubHarness.refresh(stub, refreshToken, session: session).status == 500)
        stub.randomFaults = SpotifyStub.RandomFaults(probability: 0, faults: [.internalServerError])
        #expect(try await StubHarness.refresh(stub, refreshToken, session: session).status == 200)
        #expect(stub.counters.faultsInjected == 2)
    }
}
