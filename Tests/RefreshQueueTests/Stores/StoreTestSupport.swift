import Foundation
import RefreshQueue
import TestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A directory of its own for one test, under the system's temporary directory.
///
/// Call ``remove()`` in a `defer` right after creating it.
struct StoreTestDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("RefreshQueueStoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A file (or directory) inside the test's directory; not created.
    func file(_ relativePath: String) -> URL {
        url.appendingPathComponent(relativePath, isDirectory: false)
    }

    /// The names in the test's directory, sorted (hidden ones included).
    func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// What a test stores: shaped like an OAuth authentication, with a date.
struct StoredCredentials: Codable, Sendable, Equatable {
    var accessToken: String
    var refreshToken: String
    var expiresAt: Date
    var scopes: [String]

    static func sample(_ number: Int = 0) -> StoredCredentials {
        StoredCredentials(
            accessToken: "access-secret-\(number)", refreshToken: "refresh-secret-\(number)",
            expiresAt: Date(timeIntervalSince1970: 1_700_000_000.123456 + Double(number)),
            scopes: ["user-read-private", "user-read-email"])
    }
}

/// Records a store's events, from any thread.
final class StoreEventLog: Sendable {
    private let recorded = Protected<[AuthenticationStoreEvent]>([])

    var events: [AuthenticationStoreEvent] { recorded.current }

    /// The handler to pass as a store's `onEvent`.
    var handler: @Sendable (AuthenticationStoreEvent) -> Void {
        { [recorded] event in recorded.withLock { $0.append(event) } }
    }

    /// The events other than `.saved` and `.removed`.
    var problems: [AuthenticationStoreEvent] {
        events.filter {
            switch $0 {
            case .saved, .removed: return false
            default: return true
            }
        }
    }
}

/// The permission bits of a file or directory, or nil when it does not exist.
func storeTestMode(of url: URL) -> mode_t? {
    var status = stat()
    guard stat(url.path, &status) == 0 else { return nil }
    return status.st_mode & 0o7777
}

/// Seconds on the monotonic clock, for measuring waits.
func storeTestUptime() -> TimeInterval {
    ProcessInfo.processInfo.systemUptime
}
