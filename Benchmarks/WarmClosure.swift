import Dispatch
import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A closure that holds a valid token and has nothing waiting, so that every request takes the
/// fast path: signed inline, on the caller's thread.
struct WarmClosure: Sendable {
    /// The closure, with its authentication loaded.
    let closure: RefreshingRequestClosure<FakeAuthentication>
    /// The header value it signs with; never printed.
    let header: String

    /// Creates the closure, lets the first request load the authentication through `find` on the
    /// closure's queue, and waits until a request completes inline.
    static func make() throws -> WarmClosure {
        let authentication = FakeAuthentication(stale: false, refresher: ManualRefresher())
        let closure = RefreshingRequestClosure<FakeAuthentication>(
            options: .init(
                refreshWindow: .unlimited
            ),
            find: { authentication }
        )
        let base = try BenchmarkRequest.make()
        let first = DrainCounter(expected: 1)
        closure.authorize(base, completion: first.completion)
        guard first.waitForLast(seconds: 10) != nil, first.failures == 0 else {
            throw BenchmarkError("the first request was not signed")
        }
        // The first request leaves the backlog just after its completion ran: retry briefly
        // until a request completes before `authorize` returns.
        for _ in 0..<1_000 {
            let inline = InlineResult()
            closure.authorize(base) { inline.store($0) }
            if let signed = inline.take() {
                try BenchmarkRequest.verify(try signed.get(), header: authentication.bearerHeader)
                return WarmClosure(closure: closure, header: authentication.bearerHeader)
            }
            usleep(1_000)
        }
        throw BenchmarkError("requests never took the fast path")
    }
}

/// The result of a completion, if it ran before `authorize` returned.
private final class InlineResult: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<URLRequest, any Error>?

    /// Keeps what the completion received.
    func store(_ result: Result<URLRequest, any Error>) {
        lock.withLock { self.result = result }
    }

    /// What the completion received, if it ran.
    func take() -> Result<URLRequest, any Error>? {
        lock.withLock { result }
    }
}
