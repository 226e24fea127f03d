import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RefreshQueueError` compares by case and value, so that tests can expect one error exactly.
@Suite("RefreshQueueError equality")
struct RefreshQueueErrorEqualityTests {
    private struct Opaque: Error {
        let detail: String
    }

    private enum Coded: Error {
        case first
        case second
    }

    @Test func aTestCanExpectAnExactError() async {
        let closure = RefreshingRequestClosure<FakeAuthentication>(find: { nil })
        await #expect(throws: RefreshQueueError.notAuthenticated) {
            try await closure.authorize(makeRequest())
        }
    }

    @Test func casesWithoutValuesEqualOnlyThemselves() {
        let all: [RefreshQueueError] = [
            .notAuthenticated, .refreshTimedOut, .invalidToken, .excessiveRefresh, .cancelled,
        ]
        for (index, error) in all.enumerated() {
            for (other, candidate) in all.enumerated() {
                #expect((error == candidate) == (index == other), "\(error) against \(candidate)")
            }
        }
    }

    @Test func casesWithValuesCompareTheirValues() {
        #expect(RefreshQueueError.invalidConfiguration("a") == .invalidConfiguration("a"))
        #expect(RefreshQueueError.invalidConfiguration("a") != .invalidConfiguration("b"))
        #expect(RefreshQueueError.insecureRequest(host: "a.test") == .insecureRequest(host: "a.test"))
        #expect(RefreshQueueError.insecureRequest(host: "a.test") != .insecureRequest(host: "b.test"))
        #expect(RefreshQueueError.insecureRequest(host: "a.test") != .invalidConfiguration("a.test"))
    }

    @Test func carriedEquatableErrorsCompareByValue() {
        let timedOut = RefreshQueueError.refreshFailed(URLError(.timedOut))
        #expect(timedOut == .refreshFailed(URLError(.timedOut)))
        #expect(timedOut != .refreshFailed(URLError(.notConnectedToInternet)))
        #expect(timedOut != .authenticationUnreadable(URLError(.timedOut)))
        let cancelled = RefreshQueueError.refreshFailed(RefreshQueueError.cancelled)
        #expect(cancelled == .refreshFailed(RefreshQueueError.cancelled))
        #expect(
            RefreshQueueError.refreshFailed(FutureError.abandoned) != .refreshFailed(FutureError.timedOut))
    }

    @Test func carriedOtherErrorsCompareByTypeDomainAndCode() {
        #expect(RefreshQueueError.refreshFailed(Coded.first) == .refreshFailed(Coded.first))
        #expect(RefreshQueueError.refreshFailed(Coded.first) != .refreshFailed(Coded.second))
        #expect(RefreshQueueError.refreshFailed(Opaque(detail: "a")) == .refreshFailed(Opaque(detail: "b")))
        #expect(RefreshQueueError.refreshFailed(Opaque(detail: "a")) != .refreshFailed(Coded.first))
        let fileError = NSError(domain: NSCocoaErrorDomain, code: 257)
        #expect(RefreshQueueError.authenticationUnreadable(fileError) == .authenticationUnreadable(fileError))
        #expect(
            RefreshQueueError.authenticationUnreadable(fileError)
                != .authenticationUnreadable(NSError(domain: NSCocoaErrorDomain, code: 4)))
    }
}
