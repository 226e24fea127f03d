import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One memory measurement, run in a fresh child process (`Benchmarks --memory-probe ROLE`) so that
/// neither figure inherits the other's heap.
///
/// Both roles set up the same closure with a refresh pending and warm up the same way; then they
/// create 100,000 distinct requests (a different path each) and either hand them to `authorize`
/// (the scenario: they wait) or keep them, with the completion, in an array (the baseline). The
/// figure is the growth of the resident set divided by 100,000.
enum MemoryProbe {
    /// Which figure the child measures.
    enum Role: String, Sendable {
        /// Requests waiting in the closure behind a pending refresh.
        case scenario
        /// Requests and completions held in an array.
        case baseline
        /// The heap blocks and bytes that the waiting requests cost, traced allocation by
        /// allocation (see ``HeapTrace``): only the `authorize` calls are traced.
        case heap
    }

    /// Waiting requests per measurement.
    static let requests = 100_000

    /// The child's entry point: prints the resident bytes per request on standard output.
    static func runChild(_ role: Role) -> Int32 {
        do {
            if role == .heap {
                try traceAuthorize()
            } else {
                print(try measure(role))
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("memory probe: \(error)\n".utf8))
            return 1
        }
    }

    /// Runs one probe of `role` in a child process and returns its figure.
    static func spawn(_ role: Role) throws -> Double {
        let text = try runChildProcess(role)
        guard let value = Double(text) else {
            throw BenchmarkError("the \(role.rawValue) memory probe printed no figure")
        }
        return value
    }

    /// The heap blocks and bytes of one waiting request, from a traced child process; `nil` where
    /// allocations cannot be traced.
    static func spawnHeapTrace() throws -> HeapTrace.Live? {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("refreshqueue-heap-\(ProcessInfo.processInfo.processIdentifier).trace").path
        guard let environment = HeapTrace.environment(tracingInto: path) else { return nil }
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard try runChildProcess(.heap, environment: environment) == "traced" else { return nil }
        let trace = try String(contentsOfFile: path, encoding: .utf8)
        guard let live = HeapTrace.live(inTrace: trace) else {
            throw BenchmarkError("the heap trace ends before the end of the traced code")
        }
        guard live.blocks > 0 else { return nil }
        return live
    }

    private static func runChildProcess(_ role: Role, environment: [String: String]? = nil) throws -> String {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--memory-probe", role.rawValue]
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("the \(role.rawValue) memory probe failed (status \(process.terminationStatus))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The heap role: the requests are made first and kept, then only the `authorize` calls that
    /// make them wait are traced, so what stays allocated is what waiting costs. Once traced, the
    /// process ends here (see ``HeapTrace/flushAndExit()``).
    private static func traceAuthorize() throws {
        let (closure, completion, base) = try pendingClosure()
        let requests = (0..<requests).map { request($0, base: base) }
        guard HeapTrace.start() else {
            print("untraced")
            return
        }
        for request in requests {
            closure.authorize(request, completion: completion)
        }
        HeapTrace.markEnd()
        // Nothing is released before the process ends: tracing thousands of releases would take
        // long enough for the waiting requests to time out.
        withExtendedLifetime((closure, requests)) {
            print("traced")
            HeapTrace.flushAndExit()
        }
    }

    /// A closure whose first request started a refresh that stays pending: later requests wait,
    /// for up to an hour, so that none times out (and is let go of) while it is measured, however
    /// slowly the allocation trace goes.
    private static func pendingClosure() throws -> (RefreshingRequestClosure<FakeAuthentication>, Completion, URL) {
        let refresher = ManualRefresher()
        let stale = FakeAuthentication(stale: true, refresher: refresher)
        let closure = RefreshingRequestClosure<FakeAuthentication>(
            options: .init(refreshTimeout: 3_600, refreshWindow: .unlimited), find: { stale })
        let counter = DrainCounter(expected: requests + 1)
        let completion = counter.completion
        let base = try BenchmarkRequest.baseURL()
        closure.authorize(BenchmarkRequest.make(url: base), completion: completion)
        guard refresher.waitUntilStarted(seconds: 10) else {
            throw BenchmarkError("the first request did not start a refresh")
        }
        return (closure, completion, base)
    }

    /// Sets up the closure with a refresh pending, creates the 100,000 requests as `role` says,
    /// and returns the growth of the resident set per request.
    private static func measure(_ role: Role) throws -> Double {
        let (closure, completion, base) = try pendingClosure()
        for index in 0..<2_000 {
            blackHole(request(index, base: base))
        }
        var held: [HeldRequest] = []
        let before = try ResidentMemory.bytes()
        switch role {
        case .scenario:
            for index in 0..<requests {
                closure.authorize(request(index, base: base), completion: completion)
            }
        case .baseline:
            held.reserveCapacity(requests)
            for index in 0..<requests {
                held.append(HeldRequest(request: request(index, base: base), completion: completion))
            }
        case .heap:
            throw BenchmarkError("the heap role is traced, not measured")
        }
        let after = try ResidentMemory.bytes()
        blackHole(held)
        withExtendedLifetime(closure) {}
        return Double(after - before) / Double(requests)
    }

    /// A request and its completion, as the baseline keeps them. A struct with a field of the
    /// completion's own type stores the closure as it is, as the library's task does: an array of
    /// `(URLRequest, Completion)` tuples would store it at the generic element's abstraction and wrap
    /// every completion in a reabstraction thunk, one more heap block (32 B) per request that holding
    /// a completion does not need, which would inflate the baseline.
    private struct HeldRequest {
        let request: URLRequest
        let completion: Completion
    }

    /// The distinct request number `index`: `…/v1/me/item-<index>` with the `Accept` header.
    private static func request(_ index: Int, base: URL) -> URLRequest {
        BenchmarkRequest.make(url: base.appendingPathComponent("item-\(index)"))
    }
}
