// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "RefreshQueue",
    platforms: [
        .iOS(.v13),
        .macOS(.v10_15),
        .tvOS(.v13),
        .watchOS(.v6),
    ],
    products: [
        .library(name: "RefreshQueue", targets: ["RefreshQueue"]),
        // A coordinated store on a Redis server, for services that share one token across machines.
        .library(name: "RefreshQueueRedis", targets: ["RefreshQueueRedis"]),
    ],
    targets: [
        .target(
            name: "RefreshQueue",
            path: "Sources/RefreshQueue"
        ),
        .target(
            name: "RefreshQueueRedis",
            dependencies: ["RefreshQueue"],
            path: "Sources/RefreshQueueRedis"
        ),
        // A Spotify-like accounts service and Web API on loopback: the fixture of the Example, the
        // integration tests and the benchmarks. Foundation only; it does not know RefreshQueue.
        .target(
            name: "SpotifyStub",
            path: "Example/SpotifyStub"
        ),
        // A redis-server of this machine's on a free loopback port, for `--fleet` and the Redis tests.
        .target(
            name: "LocalRedis",
            path: "Example/LocalRedis"
        ),
        .executableTarget(
            name: "Example",
            dependencies: ["RefreshQueue", "RefreshQueueRedis", "SpotifyStub", "LocalRedis"],
            path: "Example/Demo"
        ),
        // Ratios against baselines measured in the same run: `swift run -c release Benchmarks`.
        .executableTarget(
            name: "Benchmarks",
            dependencies: ["RefreshQueue", "SpotifyStub"],
            path: "Benchmarks",
            exclude: ["README.md"]
        ),
        // The allocator's count of heap bytes in use, for the soak's leak check (C: glibc's and
        // Apple's malloc statistics are not visible to Swift).
        .target(
            name: "HeapStatistics",
            path: "Tests/HeapStatistics"
        ),
        // The requests of the soak and crash-kill tests, run in the test process and in workers.
        .target(
            name: "Workload",
            dependencies: ["RefreshQueue", "HeapStatistics"],
            path: "Tests/Workload"
        ),
        // A child process of the soak and crash-kill tests: one closure on a shared token file.
        .executableTarget(
            name: "RefreshWorker",
            dependencies: ["RefreshQueue", "RefreshQueueRedis", "SpotifyStub", "Workload"],
            path: "Tests/RefreshWorker"
        ),
        // Top-level code calling the library as a command-line tool's main.swift does: compiled
        // with the tests (what `try await` picks there), never run.
        .executableTarget(
            name: "TopLevelCode",
            dependencies: ["RefreshQueue"],
            path: "Tests/TopLevelCode"
        ),
        // Test traits shared by both test targets.
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "RefreshQueueTests",
            dependencies: ["RefreshQueue", "TestSupport"],
            path: "Tests/RefreshQueueTests"
        ),
        // The fuzz targets' checks over every committed corpus and regression input; the fuzzer
        // itself is built and run by Tests/Fuzz/run.
        .testTarget(
            name: "FuzzRegressionTests",
            dependencies: ["RefreshQueue", "RefreshQueueRedis", "SpotifyStub"],
            path: "Tests/Fuzz",
            exclude: ["run", "Entry", "Corpus", "Regressions"],
            sources: ["Targets", "FuzzRegressionTests.swift"]
        ),
        // Against the stub on loopback, child processes, and a real redis-server (started per test;
        // the Redis tests are skipped when none is installed, unless REQUIRE_REDIS=1).
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["RefreshQueue", "RefreshQueueRedis", "LocalRedis", "SpotifyStub", "TestSupport", "Workload"],
            path: "Tests/IntegrationTests"
        ),
        // Every ```swift block of the documentation catalog and of README.md, compiled (Snippets/)
        // and checked to match the documents line for line (ArticleSnippetTests).
        .testTarget(
            name: "DocumentationTests",
            dependencies: ["RefreshQueue", "RefreshQueueRedis"],
            path: "Tests/DocumentationTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
