import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every save and removal of a file store checks and writes under one short lock, shared by
/// every process using the file, and reports its events only once the lock is released.
@Suite("File store write lock", .timeLimit(.minutes(3)))
struct FileStoreWriteLockTests {
    private static func writeLockPath(of store: FileAuthenticationStore<String>) throws -> String {
        try #require(FileStorePaths(store.fileURL)).writeLockFile
    }

    @Test func saveAndRemoveWaitForAnotherWriterAndGiveUpAfterTheTimeout() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("token.json"), writeLockTimeout: 0.05)
        try store.save("a")
        // Another process in the middle of a write.
        let held = try FileStoreLock.acquire(path: try Self.writeLockPath(of: store), timeout: 1)
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0.05)) { try store.save("b") }
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0.05)) { try store.remove() }
        #expect(store.load() == "a", "nothing was written while the other writer held the lock")
        held.unlock()
        try store.save("b")
        #expect(store.load() == "b")
        try store.remove()
        #expect(store.load() == nil)
    }

    @Test func theWriteLockIsAHiddenFileOfItsOwnNextToTheStoredOne() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("token.json"))
        try store.save("a")
        #expect(try directory.entries() == [".token.json.write.lock", "token.json"])
    }

    @Test func aNewerVersionsFileWrittenWhileASaveWaitsIsNotOverwritten() async throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        // The save waits longer than this test may take: on a machine busy enough to keep this
        // test's task from running for seconds, the save must still be waiting when it resumes.
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("token.json"), writeLockTimeout: 600)
        try store.save("old")
        let lockPath = try Self.writeLockPath(of: store)
        // The upgraded app, in another process, takes the write lock to write its own format.
        let held = try FileStoreLock.acquire(path: lockPath, timeout: 1)
        let saved = Completions<String>()
        Thread.detachNewThread {
            do {
                try store.save("from-the-old-app")
                saved.record(1, "saved")
            } catch {
                saved.record(1, "\(error)")
            }
        }
        // The old app's save has started and waits for the lock (Linux shows its descriptor).
        #if os(Linux)
        try await Self.waitUntil { Self.descriptors(onFileAt: lockPath) == 2 }
        #endif
        let newer = Data(#"{"formatVersion":2,"value":{"token":"from-the-new-app"}}"#.utf8)
        try newer.write(to: directory.file("token.json"), options: .atomic)
        held.unlock()
        await saved.wait(for: 1)
        #expect(saved.results[1] == "\(AuthenticationStoreError.futureFormatVersion(found: 2, supported: 1))")
        #expect(try Data(contentsOf: directory.file("token.json")) == newer)
    }

    @Test func anEventHandlerThatSavesAgainDoesNotWaitForItsOwnLock() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let nested = Protected<String?>(nil)
        let box = Protected<FileAuthenticationStore<String>?>(nil)
        let store = try FileAuthenticationStore<String>(fileURL: directory.file("token.json"), writeLockTimeout: 0.05) {
            event in
            let first = nested.withLock { state in
                defer { state = state ?? "started" }
                return state == nil
            }
            guard case .saved = event, first, let store = box.current else { return }
            do {
                try store.save("from-the-handler")
                nested.withLock { $0 = "saved" }
            } catch {
                nested.withLock { $0 = "\(error)" }
            }
        }
        box.withLock { $0 = store }
        try store.save("a")
        #expect(nested.current == "saved")
        #expect(store.load() == "from-the-handler")
        box.withLock { $0 = nil }
    }

    /// How many descriptors of this process are open on the file at `path` (same device and
    /// inode, whatever symbolic links the path goes through).
    private static func descriptors(onFileAt path: String) -> Int {
        var named = stat()
        guard stat(path, &named) == 0 else { return 0 }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { entry in
            var opened = stat()
            return stat("/proc/self/fd/" + entry, &opened) == 0 && opened.st_dev == named.st_dev
                && opened.st_ino == named.st_ino
        }.count
    }

    /// Returns once `condition` holds, checking every millisecond for at most two minutes.
    private static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: 120)
        while !condition() {
            try #require(Date() < deadline, "the condition never held")
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
