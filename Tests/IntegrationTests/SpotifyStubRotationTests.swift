import Foundation
import SpotifyStub
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("SpotifyStub refresh-token rotation", .timeLimit(.minutes(2)))
struct SpotifyStubRotationTests {
    @Test func withoutRotationTheSameRefreshTokenKeepsWorking() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let login = try await StubHarness.login(stub, session: session)
        let refreshToken = try #require(login.refreshToken)

        var accessTokens = [login.accessToken]
        for _ in 0..<3 {
            let refreshed = try StubHarness.tokens(
                from: try await StubHarness.refresh(stub, refreshToken, session: session))
            #expect(refreshed.refreshToken == nil)
            #expect(refreshed.scope == "user-read-private")
            accessTokens.append(refreshed.accessToken)
        }

        #expect(Set(accessTokens).count == 4)
        for accessToken in accessTokens {
            let me = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: accessToken)
            #expect(me.status == 200)
        }
        #expect(stub.counters.refreshTokenGrants == 3)
        #expect(stub.counters.reuseDetections == 0)
    }

    @Test func withRotationEachRefreshReplacesTheRefreshToken() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        stub.detectsRefreshTokenReuse = false
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let login = try await StubHarness.login(stub, session: session)
        let first = try #require(login.refreshToken)

        let refreshed = try StubHarness.tokens(from: try await StubHarness.refresh(stub, first, session: session))
        let second = try #require(refreshed.refreshToken)
        let replay = try await StubHarness.refresh(stub, first, session: session)
        let next = try await StubHarness.refresh(stub, second, session: session)

        #expect(second != first)
        #expect(replay.status == 400)
        #expect(replay.json?["error"] as? String == "invalid_grant")
        #expect(next.status == 200)
        #expect(stub.counters.reuseDetections == 0)
        #expect(stub.counters.refreshTokenGrants == 2)
    }

    @Test func replayingARotatedRefreshTokenRevokesTheWholeFamily() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let victim = try await StubHarness.login(stub, session: session)
        let bystander = try await StubHarness.login(stub, session: session)
        let stolen = try #require(victim.refreshToken)
        let rotated = try StubHarness.tokens(from: try await StubHarness.refresh(stub, stolen, session: session))
        let current = try #require(rotated.refreshToken)

        let replay = try await StubHarness.refresh(stub, stolen, session: session)

        #expect(replay.status == 400)
        #expect(replay.json?["error"] as? String == "invalid_grant")
        #expect(stub.counters.reuseDetections == 1)
        // Everything descended from that authorization is dead...
        let afterRevocation = try await StubHarness.refresh(stub, current, session: session)
        #expect(afterRevocation.status == 400)
        #expect(afterRevocation.json?["error"] as? String == "invalid_grant")
        for accessToken in [victim.accessToken, rotated.accessToken] {
            let me = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: accessToken)
            #expect(me.status == 401)
            #expect(me.text.contains("Invalid access token"))
        }
        // ...and nothing else is.
        let other = try await StubHarness.get("/v1/me", on: stub, session: session, bearer: bystander.accessToken)
        #expect(other.status == 200)
        let otherRefresh = try await StubHarness.refresh(stub, try #require(bystander.refreshToken), session: session)
        #expect(otherRefresh.status == 200)
    }

    @Test func withinTheReuseIntervalARotatedRefreshTokenRotatesAgainInsteadOfRevoking() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        stub.refreshTokenReuseInterval = 3600
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let login = try await StubHarness.login(stub, session: session)
        let first = try #require(login.refreshToken)
        // The answer to this rotation is lost (its client died before saving it)...
        let lost = try StubHarness.tokens(from: try await StubHarness.refresh(stub, first, session: session))
        // ...so the previous refresh token is presented again, within the interval.
        let again = try StubHarness.tokens(from: try await StubHarness.refresh(stub, first, session: session))
        let third = try #require(again.refreshToken)

        #expect(stub.counters.reuseDetections == 0)
        #expect(stub.counters.reuseIntervalRefreshes == 1)
        #expect(stub.counters.refreshTokenGrants == 2)
        #expect(
            try await StubHarness.get("/v1/me", on: stub, session: session, bearer: again.accessToken).status == 200)
        // The family has one current refresh token: the lost one was rotated away in turn.
        stub.refreshTokenReuseInterval = 0
        let replayOfLost = try await StubHarness.refresh(stub, try #require(lost.refreshToken), session: session)
        #expect(replayOfLost.status == 400)
        #expect(stub.counters.reuseDetections == 1)
        // Which revokes the family, the current refresh token included.
        #expect(try await StubHarness.refresh(stub, third, session: session).status == 400)
    }

    @Test func pastTheReuseIntervalARotatedRefreshTokenIsAReplay() async throws {
        let stub = try StubHarness.startedStub()
        defer { stub.stop() }
        stub.rotatesRefreshTokens = true
        stub.refreshTokenReuseInterval = 3600
        let session = StubHarness.makeSession()
        defer { session.invalidateAndCancel() }
        let login = try await StubHarness.login(stub, session: session)
        let first = try #require(login.refreshToken)
        let rotated = try StubHarness.tokens(from: try await StubHarness.refresh(stub, first, session: session))
        stub.refreshTokenReuseInterval = 0

        let replay = try await StubHarness.refresh(stub, first, session: session)

        #expect(replay.status == 400)
        #expect(replay.json?["error"] as? String == "invalid_grant")
        #expect(stub.counters.reuseDetections == 1)
        #expect(stub.counters.reuseIntervalRefreshes == 0)
        let afterRevocation = try await StubHarness.refresh(stub, try #require(rotated.refreshToken), session: session)
        #expect(afterRevocation.status == 400)
    }

    @Test func onArrivalTheRefreshTokenIsSpentBeforeTheAnswerIsSent() async throws {
        for onArrival in [true, false] {
            let stub = try StubHarness.startedStub()
            defer { stub.stop() }
            stub.rotatesRefreshTokens = true
            stub.processesTokenRequestsOnArrival = onArrival
            let session = StubHarness.makeSession()
            defer { session.invalidateAndCancel() }
            let login = try await StubHarness.login(stub, session: session)
            stub.tokenLatency = 30
            // The client gives up long before the answer (30 s away), but not before its request
            // has reached the stub, even on a loaded machine.
            let impatient = StubHarness.makeSession(timeout: 2)
            defer { impatient.invalidateAndCancel() }
            await #expect(throws: (any Error).self) {
                _ = try await StubHarness.refresh(stub, try #require(login.refreshToken), session: impatient)
            }
            #expect(stub.counters.refreshTokenGrants == (onArrival ? 1 : 0), "on arrival: \(onArrival)")
        }
    }
}
