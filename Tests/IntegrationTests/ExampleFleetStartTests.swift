import Foundation
import TestSupport
import Testing

/// How `swift run Example --fleet` starts its Redis server when the machine is not as expected.
@Suite("Example --fleet start", .timeLimit(.minutes(5)))
struct ExampleFleetStartTests {
    /// Runs the built Example with `arguments` and `environment` added to this process's; returns
    /// its exit status, whether it ended by a signal (a crash), and what it printed on both
    /// outputs.
    private static func run(_ arguments: [String], environment: [String: String]) async throws -> (
        status: Int32, crashed: Bool, output: String
    ) {
        let example = try #require(BuiltExecutable.url(named: "Example"), "build it first: swift build")
        let process = Process()
        process.executableURL = example
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let exited = Completions<Int32>()
        process.terminationHandler = { exited.record(0, $0.terminationStatus) }
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        await exited.wait(for: 1)
        return (
            exited.results[0] ?? -1, process.terminationReason == .uncaughtSignal,
            String(decoding: printed, as: UTF8.self)
        )
    }

    /// The data directory went into the server's configuration unquoted, so a path with a space
    /// was split and the server refused to start.
    @Test(.exclusive, .enabled(if: RedisFixture.enabled, RedisFixture.skipReason))
    func aTemporaryPathWithASpaceStillStartsTheServer() async throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("fleet \(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let run = try await Self.run(["--fleet", "2", "--requests", "10"], environment: ["TMPDIR": temporary.path])
        #expect(!run.crashed && run.status == 0, "\(run.output)")
    }
}
