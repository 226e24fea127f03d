import Testing

@testable import SpotifyStub

/// The stub's throttling window, with the times given rather than read from a clock.
@Suite("SpotifyStub rate window")
struct StubRateWindowTests {
    @Test func theRateWindowAdmitsTheLimitPerSecondAndStartsAfreshAfterIt() {
        let limit = SpotifyStub.RateLimit(requestsPerSecond: 2, retryAfter: 7)
        var window = RateWindow()
        let admitted = [100.0, 100.1, 100.2, 100.9, 101.0, 101.5, 101.6, 101.99].map {
            window.admit(now: $0, limit: limit)
        }
        #expect(admitted == [true, true, false, false, true, true, false, false])
    }
}
