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
        .library(name: "RefreshQueue", targets: ["RefreshQueue"])
    ],
    targets: [
        .target(
            name: "RefreshQueue",
            path: "Sources/RefreshQueue"
        ),
        .testTarget(
            name: "RefreshQueueTests",
            dependencies: ["RefreshQueue"],
            path: "Tests/RefreshQueueTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
