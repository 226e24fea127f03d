import Foundation
import SpotifyStub
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub HTTP/1.1 handling", .timeLimit(.minutes(5)))
struct SpotifyStubHTTPTests {
    @Test(
        arguments: [
            "GARBAGE\r\n\r\n",
            "GET /v1/me\r\n\r\n",
            "GET  /v1/me HTTP/1.1\r\n\r\n",
            "GET v1/me HTTP/1.1\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: x\r\n folded: continuation\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: x\rInjected: y\r\n\r\n",
            "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET /v1/me HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n",
            "GET /v1/me HTTP/x.y\r\n\r\n",
        ] as [EscapedText])
    func malformedRequestsGet400AndTheConnectionIsClosed(request: EscapedText) throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send(request.value)
        let response = try client.readResponse()

        #expect(response.status == 400)
        #expect(response.headers["connection"] == "close")
        #expect(client.serverClosed())
    }

    /// RFC 9110 §9.3.2: the answer to HEAD is the head alone; a body after it would be read as the
    /// start of the next answer on the connection.
    @Test(arguments: ["/v1/me", "/nowhere", "/api/token"])
    func anAnswerToHEADHasNoBody(path: String) throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send("HEAD \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let bytes = try client.readUntilClosed()

        let text = String(decoding: bytes, as: UTF8.self)
        let head = try #require(text.range(of: "\r\n\r\n"), "no end of the header section in \(text)")
        #expect(text[head.upperBound...].isEmpty, "a body after the head: \(text[head.upperBound...])")
        #expect(text.lowercased().contains("content-length: "))
    }

    @Test func anUnsupportedHTTPVersionGets505() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }

        let response = try StubHarness.rawExchange(stub, "GET /v1/me HTTP/2.0\r\nHost: x\r\n\r\n")

        #expect(response.status == 505)
    }

    @Test func chunkedRequestBodiesGet501() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }

        let response = try StubHarness.rawExchange(
            stub,
            "POST /api/token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        )

        #expect(response.status == 501)
        #expect(response.headers["connection"] == "close")
    }

    @Test func oversizedHeadersGet431() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        let filler = String(repeating: "a", count: 17 * 1024)

        try client.send("GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Filler: \(filler)\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.status == 431)
        #expect(client.serverClosed())
    }

    @Test func headersThatNeverEndGet431Too() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send("GET /v1/me HTTP/1.1\r\n" + String(repeating: "X-Header: value\r\n", count: 1100))
        let response = try client.readResponse()

        #expect(response.status == 431)
    }

    @Test func anOversizedBodyGets413BeforeItIsSent() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send(
            "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: 2000000\r\n\r\n"
        )
        let response = try client.readResponse()

        #expect(response.status == 413)
        #expect(response.headers["connection"] == "close")
        #expect(stub.counters.tokenRequests == 0)
    }

    @Test func anOversizedBodyThatIsSentAnywayStillGets413() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 1_500_000)

        // The stub answers after the headers and then reads and discards the body (lingering
        // close), so this send completes and the 413 is not destroyed by a reset.
        try client.send(
            Array(
                "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n"
                    .utf8
            ) + body
        )
        let response = try client.readResponse()

        #expect(response.status == 413)
    }

    @Test func aBodyOfExactlyOneMebibyteIsAccepted() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        var body = Array("grant_type=refresh_token&refresh_token=x&padding=".utf8)
        body += [UInt8](repeating: UInt8(ascii: "a"), count: 1024 * 1024 - body.count)

        try client.send(
            Array(
                "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n"
                    .utf8
            ) + body
        )
        let response = try client.readResponse()

        // Processed as a token request: the client is not authenticated.
        #expect(response.status == 400)
        #expect(response.json?["error"] as? String == "invalid_client")
    }

    @Test func expectContinueGetsAnInterimResponse() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }
        let body = "grant_type=refresh_token&refresh_token=x"

        try client.send(
            "POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n"
        )
        let interim = try client.readResponse()
        try client.send(body)
        let final = try client.readResponse()

        #expect(interim.status == 100)
        #expect(final.status == 400)
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        for _ in 0..<5 {
            try client.send("GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 401)
            #expect(response.headers["connection"] == nil)
        }

        #expect(stub.counters.liveConnections == 1)
        #expect(stub.counters.apiRequestsByStatus == [401: 5])
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send(
            "GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /authorize?client_id=nobody HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )

        #expect(try client.readResponse().status == 401)
        #expect(try client.readResponse().status == 404)
        let last = try client.readResponse()
        #expect(last.status == 400)
        #expect(last.headers["connection"] == "close")
        #expect(client.serverClosed())
    }

    @Test func connectionCloseIsHonoured() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let client = try StubHarness.RawClient(port: stub.port)
        defer { client.close() }

        try client.send("GET /v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let response = try client.readResponse()

        #expect(response.status == 401)
        #expect(response.headers["connection"] == "close")
        #expect(client.serverClosed())
        client.close()
        #expect(await StubHarness.eventually { stub.counters.liveConnections == 0 })
    }

    @Test func http10ClosesUnlessAskedToKeepAlive() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let plain = try StubHarness.RawClient(port: stub.port)
        defer { plain.close() }
        let keepAlive = try StubHarness.RawClient(port: stub.port)
        defer { keepAlive.close() }

        try plain.send("GET /v1/me HTTP/1.0\r\n\r\n")
        try keepAlive.send("GET /v1/me HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try plain.readResponse()
        let second = try keepAlive.readResponse()
        try keepAlive.send("GET /v1/me HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let third = try keepAlive.readResponse()

        #expect(first.headers["connection"] == "close")
        #expect(plain.serverClosed())
        #expect(second.headers["connection"] == "keep-alive")
        #expect(third.status == 401)
    }

    @Test func absoluteFormTargetsAreRouted() throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }

        let response = try StubHarness.rawExchange(stub, "GET http://127.0.0.1/v1/me HTTP/1.1\r\nHost: x\r\n\r\n")

        #expect(response.status == 401)
    }

    @Test func aClientThatVanishesMidRequestLeaksNothing() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let partialHeader = try StubHarness.RawClient(port: stub.port)
        let partialBody = try StubHarness.RawClient(port: stub.port)
        try partialHeader.send("GET /v1/me HTTP/1.1\r\nHo")
        try partialBody.send("POST /api/token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\ngrant_type=")
        #expect(await StubHarness.eventually { stub.counters.liveConnections == 2 })

        partialHeader.close()
        partialBody.close()

        #expect(await StubHarness.eventually { stub.counters.liveConnections == 0 })
        #expect(stub.counters.tokenRequests == 0)
    }

    @Test func urlSessionReusesItsConnection() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        var session: URLSession? = StubHarness.makeSession()

        let tokens = try await StubHarness.login(stub, session: try #require(session))
        for _ in 0..<5 {
            let me = try await StubHarness.get(
                "/v1/me", on: stub, session: try #require(session), bearer: tokens.accessToken)
            #expect(me.status == 200)
        }

        #expect(stub.counters.liveConnections == 1)
        // On Linux the connection pool goes only when the invalidated session is deallocated.
        session?.invalidateAndCancel()
        session = nil
        #expect(await StubHarness.eventually { stub.counters.liveConnections == 0 })
    }

    @Test(.exclusive) func manyConcurrentURLSessionRequestsAreAllServed() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession(timeout: 15)
        defer { session.invalidateAndCancel() }
        let tokens = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(tokens.refreshToken)

        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index.isMultiple(of: 4) {
                        return try await StubHarness.refresh(stub, refreshToken, session: session).status
                    }
                    return try await StubHarness.get("/v1/me", on: stub, session: session, bearer: tokens.accessToken)
                        .status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }

        #expect(statuses.count == 200)
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(stub.counters.refreshTokenGrants == 50)
        #expect(stub.counters.apiRequestsByStatus == [200: 150])
    }

    @Test(.exclusive) func aThousandSimultaneousConnectionsAreServedAndClosedCleanly() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let count = 1000

        var clients: [StubHarness.RawClient] = []
        for _ in 0..<count {
            clients.append(try StubHarness.RawClient(port: stub.port, timeout: 10))
        }
        #expect(await StubHarness.eventually(timeout: 10) { stub.counters.liveConnections == count })
        for client in clients {
            try client.send("GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n")
        }
        var statuses: [Int: Int] = [:]
        for client in clients {
            statuses[try client.readResponse().status, default: 0] += 1
        }
        #expect(statuses == [401: count])
        #expect(stub.counters.liveConnections == count)
        for client in clients {
            client.close()
        }

        #expect(await StubHarness.eventually(timeout: 10) { stub.counters.liveConnections == 0 })
        #expect(stub.counters.apiRequestsByStatus == [401: count])
    }
}
