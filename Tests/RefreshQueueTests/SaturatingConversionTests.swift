import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// watchOS on arm64_32 has a 32-bit `Int`: these run the conversions with `Int32`, so that a
/// 64-bit machine checks what a watch would do.
@Suite("Conversions that saturate instead of trapping", .timeLimit(.minutes(1)))
struct SaturatingConversionTests {
    @Test(arguments: [
        (2_147_483_646.9, Int32(2_147_483_646)),
        (2_147_483_647.0, .max), (2_147_483_648.0, .max), (1.08e11, .max), (.infinity, .max),
        (-2_147_483_647.9, -2_147_483_647),
        (-2_147_483_648.0, .min), (-2_147_483_649.0, .min), (-.infinity, .min),
        (0.999, 0), (-0.999, 0), (.nan, 0),
    ])
    func aDoubleBecomesTheNearestInt32(value: Double, expected: Int32) {
        #expect(Int32(saturating: value) == expected)
    }

    @Test func aDoubleBecomesTheNearestInt64AndUInt64() {
        // The largest Double below 2^63 converts exactly; 2^63 itself is one past Int64.max.
        let below = Double(Int64.max).nextDown
        #expect(Int64(saturating: below) == Int64(below))
        #expect(Int64(saturating: Double(Int64.max)) == .max)
        #expect(Int64(saturating: 9.3e18) == .max)
        #expect(Int64(saturating: Double(Int64.min)) == .min)
        #expect(Int64(saturating: -9.3e18) == .min)
        #expect(UInt64(saturating: -1) == 0)
        #expect(UInt64(saturating: -0.5) == 0)
        #expect(UInt64(saturating: 1.9e19) == .max)
    }

    /// The watch's trap: the default abandon limit's deadline was `.nanoseconds(Int(108 * 1e9))`.
    @Test func aDeadlineIsComputedOnSixtyFourBits() {
        let start = DispatchTime(uptimeNanoseconds: 1_000_000_000)
        #expect(start.advanced(bySeconds: 108).uptimeNanoseconds == 109_000_000_000)
        #expect(start.advanced(bySeconds: 2.5).uptimeNanoseconds == 3_500_000_000)
        #expect(start.advanced(bySeconds: 0) == start)
        #expect(start.advanced(bySeconds: -1) == start)
        #expect(start.advanced(bySeconds: .nan) == start)
        #expect(start.advanced(bySeconds: 1e100) == .distantFuture)
        #expect(start.advanced(bySeconds: .infinity) == .distantFuture)
        // Half of what 64 bits of nanoseconds hold (about 292 years) is the limit.
        #expect(start.advanced(bySeconds: 1e8).uptimeNanoseconds == 1_000_000_000 + 100_000_000_000_000_000)
        #expect(start.advanced(bySeconds: 9.2e9).uptimeNanoseconds == 1_000_000_000 + 9_200_000_000_000_000_000)
        #expect(start.advanced(bySeconds: 9.3e9) == .distantFuture)
    }

    @Test(arguments: [120.0, 3_600, 1e8, 1e300, .infinity])
    func aRefreshBudgetOfAnyLengthHasADeadline(abandonAfter: Double) {
        let start = DispatchTime(uptimeNanoseconds: 5_000_000_000)
        let budget = RefreshBudget(abandonAfter: abandonAfter, startedAt: start)
        let expected = start.advanced(bySeconds: abandonAfter * 0.9)
        #expect(budget.workDeadline == expected)
        #expect(budget.workDeadline > start)
        #expect(budget.deadline(atFraction: 1) >= budget.workDeadline)
    }

    @Test(arguments: [
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799.0),
        ("Tue, 19 Jan 2038 03:14:07 GMT", 2_147_483_647), ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),
        ("Fri Dec 31 23:59:59 9999", 253_402_300_799),
    ])
    func anHTTPDatePastTheYear2038IsExact(text: String, seconds: Double) {
        #expect(HTTPDate.secondsSince1970(text) == seconds)
    }

    @Test(arguments: [1e300, -1e300, 9.3e18, 1e15, -1e15])
    func anEventDurationOfAnySizeIsText(seconds: Double) {
        let event = RefreshEvent.refreshSucceeded(duration: seconds)
        #expect(event.description.hasSuffix(" ms"))
        #expect(event.description.contains("refresh succeeded in"))
    }

    /// A refresh with the default abandon limit (its deadlines trapped on a watch), or the
    /// largest one, whose token endpoint asks for a pause until the end of the year 9999 (its date
    /// trapped there too) or for more seconds than any integer holds: the request fails with that
    /// answer, and the next one is refused during the pause without a second token request.
    @Test(
        arguments: [
            ("Fri, 31 Dec 9999 23:59:59 GMT", nil), ("Fri Dec 31 23:59:59 9999", nil),
            ("Thursday, 31-Dec-75 23:59:59 GMT", nil), ("999999999999999999999999", nil),
            ("Fri, 31 Dec 9999 23:59:59 GMT", Double.greatestFiniteMagnitude), ("4294967296", 1e9),
        ] as [(String, Double?)])
    func aRefreshWithTheLargestLimitsAndPausesFailsWithoutTrapping(retryAfter: String, abandonAfter: Double?)
        async throws
    {
        let server = try LoopbackServer { _ in
            .answer(status: 503, headers: ["Retry-After": retryAfter], body: Data())
        }
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123")
        let store = InMemoryAuthenticationStore<OAuth2Token>(
            OAuth2Token(accessToken: "stale", refreshToken: "rt-0123", expiresIn: 0))
        let closure = RefreshingRequestClosure(
            client: client, store: store, options: .init(abandonAfter: abandonAfter))
        #expect((closure.options.abandonAfter ?? 0) >= 120)
        let request = URLRequest(url: URL(string: "https://api.example.test/v1/me")!)
        for _ in 0..<2 {
            await #expect {
                try await closure.authorize(request)
            } throws: { error in
                guard case OAuth2Error.server(503, let retryAfter?) = error else { return false }
                // A pause of more than 7,900 years is read as the longest one taken: a day.
                return retryAfter == 86_400 && "\(error)".contains("Retry after 86400 s")
            }
        }
        #expect(server.requests.count == 1)
    }
}
