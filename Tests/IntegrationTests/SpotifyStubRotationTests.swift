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
}
