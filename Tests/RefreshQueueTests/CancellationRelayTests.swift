import Foundation
import Testing

@testable import RefreshQueue

/// The hand-off between an operation that starts and a cancellation handler that may run before,
/// during or after the start: whichever comes second cancels the operation, exactly once.
@Suite("Cancellation relay")
struct CancellationRelayTests {
    /// Counts its cancellations.
    private final class Operation: RelayedOperation, @unchecked Sendable {
        private let lock = NSLock()
        private var cancellations = 0

        func cancel() {
            lock.withLock { cancellations += 1 }
        }

        var cancelled: Int { lock.withLock { cancellations } }
    }

    @Test func aCancellationAfterTheStartHandsTheOperationOver() throws {
        let relay = CancellationRelay()
        let operation = Operation()
        #expect(relay.start(operation))
        #expect(!relay.isCancelled)
        let handed = try #require(relay.cancel())
        handed.cancel()
        #expect(operation.cancelled == 1)
        #expect(relay.isCancelled)
        // A second cancellation finds nothing left to cancel.
        #expect(relay.cancel() == nil)
    }

    @Test func aStartAfterTheCancellationIsRefused() {
        let relay = CancellationRelay()
        #expect(relay.cancel() == nil)
        let operation = Operation()
        #expect(!relay.start(operation))
        #expect(operation.cancelled == 0, "the caller cancels it; the relay does not")
    }

    @Test func racingStartsAndCancellationsCancelEveryStartedOperationOnce() async {
        let operations = (0..<2_000).map { _ in Operation() }
        await withTaskGroup(of: Void.self) { group in
            for operation in operations {
                let relay = CancellationRelay()
                group.addTask {
                    if !relay.start(operation) { operation.cancel() }
                }
                group.addTask {
                    relay.cancel()?.cancel()
                }
            }
        }
        #expect(operations.allSatisfy { $0.cancelled == 1 })
    }
}
