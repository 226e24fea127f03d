import Foundation
import TestSupport
import Testing

/// `swift run Example` needs no network. On Linux, URLSession would send its requests to the
/// stub on 127.0.0.1 through the proxy that `http_proxy` names: tokens, client secret and all.
@Suite("Example behind a proxy", .timeLimit(.minutes(5)))
struct ExampleBehindAProxyTests {
    /// Apart from other exclusive tests: two or three processes at once keep both cores busy.
    @Test(.exclusive, arguments: [[], ["--processes", "2", "--requests", "10"]])
    func theWalkthroughSendsNothingToTheProxyThatTheEnvironmentNames(arguments: [String]) async throws {
        let example = try #require(BuiltExecutable.url(named: "Example"), "build it first: swift build")
        // A proxy that records what reaches it, and answers nothing useful.
        let proxy = try LoopbackServer { _ in .answer(status: 502, headers: [:], body: Data()) }
        defer { proxy.stop() }
        let process = Process()
        process.executableURL = example
        process.arguments = ["--requests", "3"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["http_proxy"] = proxy.baseURL.absoluteString
        environment["all_proxy"] = proxy.baseURL.absoluteString
        environment["no_proxy"] = nil
        environment["NO_PROXY"] = nil
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        let exited = Completions<Int32>()
        process.terminationHandler = { exited.record(0, $0.terminationStatus) }
        try process.run()
        await exited.wait(for: 1)
        #expect(exited.results[0] == 0)
        #expect(proxy.requests.isEmpty)
    }
}
