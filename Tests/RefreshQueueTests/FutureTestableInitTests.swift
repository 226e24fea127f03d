import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

/// Where the package's internal declarations are visible (inside the module, or through a testable
/// import), `Future { complete in … }` must still be the public initializer that runs its body.
@Suite("Future body with internal declarations visible")
struct FutureTestableInitTests {
    typealias Complete = @Sendable (Result<Int, any Error>) -> Void

    @Test func aBodyThatOnlyKeepsCompleteRunsAtOnceAndCompletesTheFuture() throws {
        let kept = Protected<Complete?>(nil)
        let future = Future<Int> { complete in kept.withLock { $0 = complete } }
        let complete = try #require(kept.current, "the body did not run")
        complete(.success(4))
        #expect(try future.result?.get() == 4)
    }

    @Test func aTrailingAsyncOperationRunsAndCompletesTheFuture() async throws {
        let future = Future<Int> {
            await Task.yield()
            return 8
        }
        #expect(try await future.timeout(after: 30).value == 8)
    }
}
