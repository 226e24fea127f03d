import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One burst: requests pile up behind one pending refresh; timed from the moment the refresh
/// completes to the moment the last request completes.
enum BurstDrain {
    /// How long the refresh stays pending after it started, at least.
    static let refreshDuration: UInt64 = 50_000_000

    /// What one burst measured.
    struct Outcome {
        /// From completing the refresh (or starting the baseline loop) to the last completion.
        let nanoseconds: Double
        /// How many refreshes the closure started.
        let refreshes: Int
        /// Completions that carried an error.
        let failures: Int
    }

    /// The scenario: `requests` requests, the first of which finds the token stale and starts the
    /// refresh; the others arrive while it is pending. The refresh completes 50 ms after it started
    /// (later if enqueuing took longer), on this thread.
    static func scenario(requests: Int, base: URLRequest) throws -> Outcome {
        let refresher = ManualRefresher()
        let stale = FakeAuthentication(stale: true, refresher: refresher)
        let fresh = FakeAuthentication(stale: false, refresher: refresher)
        let closure = RefreshingRequestClosure<FakeAuthentication>(
            options: .init(refreshWindow: .unlimited), find: { stale })
        let counter = DrainCounter(expected: requests)
        let completion = counter.completion
        closure.authorize(base, completion: completion)
        guard refresher.waitUntilStarted(seconds: 10) else {
            throw BenchmarkError("the first request of a burst did not start a refresh")
        }
        let startedAt = monotonicNanoseconds()
        for _ in 1..<requests {
            closure.authorize(base, completion: completion)
        }
        sleep(until: startedAt + refreshDuration)
        let completedAt = monotonicNanoseconds()
        guard refresher.complete(with: fresh) else {
            throw BenchmarkError("the refresh of a burst was not pending")
        }
        guard let last = counter.waitForLast(seconds: 120) else {
            throw BenchmarkError("a burst did not complete every request within 120 s")
        }
        return Outcome(
            nanoseconds: Double(last &- completedAt), refreshes: refresher.callCount, failures: counter.failures)
    }

    /// The baseline: `requests` × (`setValue` + the same completion) on this thread.
    static func baseline(requests: Int, base: URLRequest, header: String) throws -> Outcome {
        let counter = DrainCounter(expected: requests)
        let completion = counter.completion
        let start = monotonicNanoseconds()
        signAll(requests, base: base, header: header, completion: completion)
        guard let last = counter.waitForLast(seconds: 1) else {
            throw BenchmarkError("the baseline loop did not complete every request")
        }
        return Outcome(nanoseconds: Double(last &- start), refreshes: 1, failures: counter.failures)
    }

    /// The baseline's loop: `count` × (`setValue` + `completion`).
    @inline(never)
    private static func signAll(_ count: Int, base: URLRequest, header: String, completion: Completion) {
        for _ in 0..<count {
            completion(.success(BenchmarkRequest.setValueSigned(base, header: header)))
        }
    }

    /// Sleeps until the monotonic clock reaches `deadline` (nanoseconds); returns at once if it has.
    private static func sleep(until deadline: UInt64) {
        let now = monotonicNanoseconds()
        guard deadline > now else { return }
        usleep(useconds_t((deadline - now) / 1_000))
    }
}
