import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The timed loops of the fast-path scenarios and their baselines.
///
/// Each loop signs a fresh copy of the same base request per iteration, so that copy-on-write
/// happens once per iteration in every loop, and returns nanoseconds per iteration. They are
/// never inlined into one another, so the optimizer treats each the same way.
enum SigningLoops {
    /// Baseline: `setValue(_:forHTTPHeaderField:)` of the header, then the completion.
    @inline(never)
    static func setValue(_ base: URLRequest, header: String, completion: Completion, iterations: Int) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            completion(.success(BenchmarkRequest.setValueSigned(base, header: header)))
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// The floor: the cheapest mutation there is (copy-on-write and one scalar), then the completion.
    @inline(never)
    static func copyOnWrite(_ base: URLRequest, completion: Completion, iterations: Int) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            var mutated = base
            mutated.timeoutInterval = 30
            completion(.success(mutated))
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// The floor of signing as the library signs: a fresh copy with the header merged into
    /// `allHTTPHeaderFields` (a value built beforehand), then the completion; no lock, no check.
    @inline(never)
    static func merge(_ base: URLRequest, header: String, completion: Completion, iterations: Int) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            completion(.success(BenchmarkRequest.mergeSigned(base, header: header)))
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// The part of an origin check that cannot be avoided: reading the request's URL.
    @inline(never)
    static func readURL(_ base: URLRequest, iterations: Int) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            blackHole(base.url)
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// The scenario: `authorize(_:completion:)` with a valid token held and nothing waiting.
    @inline(never)
    static func authorize(
        _ closure: RefreshingRequestClosure<FakeAuthentication>, _ base: URLRequest, completion: @escaping Completion,
        iterations: Int
    ) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            closure.authorize(base, completion: completion)
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// The async scenario: `try await authorize(_:)` with a valid token held and nothing waiting.
    @inline(never)
    static func authorizeAsync(
        _ closure: RefreshingRequestClosure<FakeAuthentication>, _ base: URLRequest, iterations: Int
    ) async throws -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            blackHole(try await closure.authorize(base))
        }
        return nanosecondsSince(start) / Double(iterations)
    }

    /// Async baseline: a `withCheckedContinuation` resumed at once with the unsigned request.
    @inline(never)
    static func continuation(_ base: URLRequest, iterations: Int) async -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations {
            let request = await withCheckedContinuation { (continuation: CheckedContinuation<URLRequest, Never>) in
                continuation.resume(returning: base)
            }
            blackHole(request)
        }
        return nanosecondsSince(start) / Double(iterations)
    }
}
