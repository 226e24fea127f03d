import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A token file that exists but cannot be read now — iOS data protection before the first unlock,
/// permissions changed — is not a logout: the closure reports it, and nothing is saved over it.
@Suite("A token file that cannot be read now", .timeLimit(.minutes(2)))
struct UnreadableStoreTests {
    typealias Store = FileAuthenticationStore<StoredAuthentication>

    @Test func readThrowsWhereLoadReadsNothing() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        try store.save(StoredAuthentication(accessToken: "stored"))
        #expect(chmod(store.fileURL.path, 0) == 0)
        try Unprivileged.run {
            let unreadable = AuthenticationStoreError.io(
                operation: "read the stored file \(store.fileURL.path)", errno: EACCES)
            #expect(throws: unreadable) {
                try store.read()
            }
            #expect(store.load() == nil)
        }
    }

    @Test func saveDoesNotReplaceAFileThatCannotBeReadNowWhateverVersionWroteIt() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        // A newer version's file, which this version would refuse to overwrite if it could read it.
        let newer = Data(#"{"formatVersion": 99, "value": {"anything": true}}"#.utf8)
        try newer.write(to: store.fileURL)
        #expect(chmod(directory.url.path, 0o777) == 0)
        #expect(chmod(store.fileURL.path, 0) == 0)
        try Unprivileged.run {
            let unreadable = AuthenticationStoreError.io(
                operation: "read the stored file \(store.fileURL.path)", errno: EACCES)
            #expect(throws: unreadable) {
                try store.save(StoredAuthentication(accessToken: "older-version"))
            }
        }
        #expect(chmod(store.fileURL.path, 0o600) == 0)
        #expect(try Data(contentsOf: store.fileURL) == newer)
        // remove() deletes it whatever it holds: the way out for an app that must start over.
        try Unprivileged.run {
            try store.remove()
            try store.save(StoredAuthentication(accessToken: "fresh"))
        }
        #expect(store.load() == StoredAuthentication(accessToken: "fresh"))
    }

    @Test func theClosureFailsWithAuthenticationUnreadableNotNotAuthenticatedAndSavesNothing() async throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let file = try Store(fileURL: directory.file("auth.json"))
        try file.save(StoredAuthentication(accessToken: "stored"))
        let before = try Data(contentsOf: file.fileURL)
        #expect(chmod(file.fileURL.path, 0) == 0)
        let store = DeviceStore(file)
        let logins = Protected(0)
        let closure = RefreshingRequestClosure(
            store: store, onReauthenticationRequired: { _ in logins.withLock { $0 += 1 } })
        for _ in 0..<3 {
            await #expect {
                _ = try await closure.authorize(makeRequest())
            } throws: { error in
                guard case RefreshQueueError.authenticationUnreadable = error else { return false }
                return (error as? RefreshQueueError)?.requiresReauthentication == false
            }
        }
        #expect(logins.current == 0)
        #expect(store.saves.current == 0)
        // The text names the file and the cause, and what to do on this platform.
        do {
            _ = try await closure.authorize(makeRequest())
        } catch {
            let text = error.localizedDescription
            #expect(text.contains("read the stored file \(file.fileURL.path)") && text.contains("EACCES"))
            #expect(text.contains("check the file's owner and permissions") && !text.contains("unlocked"))
        }
        #expect(chmod(file.fileURL.path, 0o600) == 0)
        #expect(try Data(contentsOf: file.fileURL) == before)
        // The device is unlocked: the same closure signs with the stored token.
        store.locked.withLock { $0 = false }
        let signed = try await closure.authorize(makeRequest())
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer stored")
    }

    @Test func aRefreshThatCannotReReadTheStoreFailsAndSavesNothing() async throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let file = try Store(fileURL: directory.file("auth.json"))
        try file.save(StoredAuthentication(accessToken: "stale", isRefreshNeeded: true))
        let store = DeviceStore(file)
        store.locked.withLock { $0 = false }
        // The device locks between loading the token and refreshing it.
        store.lockAfterReads.withLock { $0 = 1 }
        let closure = RefreshingRequestClosure(store: store)
        await #expect {
            _ = try await closure.authorize(makeRequest())
        } throws: { error in
            guard case RefreshQueueError.authenticationUnreadable = error else { return false }
            return true
        }
        #expect(store.saves.current == 0)
        #expect(StoredAuthentication.refreshes.current(for: "stale") == 0)
    }
}

/// An authentication that can live in a file store.
struct StoredAuthentication: RefreshableAuthentication, Codable, Equatable {
    /// Refreshes asked of each token.
    static let refreshes = RefreshCounts()

    var accessToken: String
    var isRefreshNeeded = false

    func refresh() -> Future<StoredAuthentication> {
        Self.refreshes.count(accessToken)
        return Future(value: StoredAuthentication(accessToken: accessToken + "-refreshed"))
    }

    static func find() -> StoredAuthentication? { nil }
}

/// Counts by token, from any thread.
final class RefreshCounts: Sendable {
    private let counts = Protected<[String: Int]>([:])

    func count(_ token: String) { counts.withLock { $0[token, default: 0] += 1 } }
    func current(for token: String) -> Int { counts.withLock { $0[token] ?? 0 } }
}

/// A file store on a device that can be locked: while `locked`, reads run as a user that may not
/// read the file (what data protection does to an app before the first unlock).
final class DeviceStore: AuthenticationStore, Sendable {
    let file: FileAuthenticationStore<StoredAuthentication>
    let locked = Protected(true)
    /// Locks the device after this many more reads, if set.
    let lockAfterReads = Protected<Int?>(nil)
    let saves = Protected(0)

    init(_ file: FileAuthenticationStore<StoredAuthentication>) {
        self.file = file
    }

    func load() -> StoredAuthentication? { (try? read()) ?? nil }

    func read() throws -> StoredAuthentication? {
        let isLocked = locked.withLock { locked in
            lockAfterReads.withLock { remaining in
                guard let left = remaining else { return }
                if left == 0 { locked = true } else { remaining = left - 1 }
            }
            return locked
        }
        guard isLocked else { return try file.read() }
        var result: Result<StoredAuthentication?, any Error> = .success(nil)
        chmod(file.fileURL.path, 0)
        let file = self.file
        try Unprivileged.run { result = Result { try file.read() } }
        return try result.get()
    }

    func save(_ value: StoredAuthentication) throws {
        saves.withLock { $0 += 1 }
        try file.save(value)
    }

    func remove() throws { try file.remove() }
}

/// Runs work as an unprivileged user on a thread of its own: on Linux, root's file-system user for
/// that thread only (`setfsuid`), so that file permissions apply to it as they do to apps.
enum Unprivileged {
    static func run(_ body: @escaping () throws -> Void) throws {
        #if os(Linux)
        guard geteuid() == 0 else { return try body() }
        typealias SetFileSystemUser = @convention(c) (UInt32) -> Int32
        let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid"))
        let setfsuid = unsafeBitCast(symbol, to: SetFileSystemUser.self)
        let outcome = Protected<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBody(body)
        let thread = Thread {
            let previous = setfsuid(65_534)
            defer {
                _ = setfsuid(UInt32(previous))
                done.signal()
            }
            do { try box.body() } catch { outcome.withLock { $0 = error } }
        }
        thread.start()
        done.wait()
        if let error = outcome.current { throw error }
        #else
        try body()
        #endif
    }

    private struct UncheckedBody: @unchecked Sendable {
        let body: () throws -> Void
        init(_ body: @escaping () throws -> Void) { self.body = body }
    }
}
