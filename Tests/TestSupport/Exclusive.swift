import Testing

/// Runs a test apart from every other test that has this trait.
///
/// Swift Testing runs tests in parallel. That is right for almost all of them, but two kinds must
/// not overlap: stress tests that keep both cores busy (ten thousand concurrent requests, chains of
/// a hundred thousand futures, a thousand sockets), and tests whose outcome depends on time passing
/// at a normal pace (short-lived tokens, timeouts). Under the thread sanitizer one of the first can
/// slow one of the second by an order of magnitude. Marking both `.exclusive` runs them one at a time,
/// while the many light tests still run beside them.
///
/// A test's time limit also counts its wait for the gate, which lasts as long as the other
/// exclusive tests take together (over a minute under the thread sanitizer, the crash-kill runs
/// among them): suites with exclusive tests take a limit of five minutes.
public struct Exclusive: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite-level trait also scopes the suite itself; only test cases take the gate.
        guard testCase != nil else {
            try await function()
            return
        }
        await ExclusiveGate.shared.enter()
        do {
            try await function()
        } catch {
            await ExclusiveGate.shared.leave()
            throw error
        }
        await ExclusiveGate.shared.leave()
    }
}

extension Trait where Self == Exclusive {
    /// Runs the test apart from every other `.exclusive` test.
    public static var exclusive: Self { Exclusive() }
}

/// One test at a time, first come first served.
actor ExclusiveGate {
    static let shared = ExclusiveGate()

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
