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

/// The token file against what other users, other programs and killed writers leave behind.
@Suite("FileAuthenticationStore, hardened", .timeLimit(.minutes(2)))
struct FileStoreHardeningTests {
    typealias Store = FileAuthenticationStore<StoredCredentials>

    @Test(arguments: [0o644, 0o640, 0o606, 0o666, 0o604])
    func aFileOthersCouldReadIsReportedAndMadePrivateBeforeItIsRead(mode: Int) throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        try store.save(.sample())
        #expect(chmod(store.fileURL.path, mode_t(mode)) == 0)

        #expect(store.load() == .sample())
        #expect(log.events.contains(.permissionsTightened(store.fileURL, found: mode)))
        #expect(storeTestMode(of: store.fileURL) == 0o600)
        #expect(!log.events.last!.description.contains("secret"))
    }

    @Test func aSymbolicLinkAtThePathIsNeverFollowed() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        // Someone points the token file at a file of theirs.
        let planted = try Store(fileURL: directory.file("planted.json"))
        try planted.save(.sample(7))
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        try FileManager.default.createSymbolicLink(
            atPath: store.fileURL.path, withDestinationPath: planted.fileURL.path)

        #expect(store.load() == nil)
        #expect(log.events.last == .unreadableFile(store.fileURL, errno: ELOOP))
        // Saving replaces the link itself; the file it pointed to is untouched.
        try store.save(.sample(1))
        #expect(store.load() == .sample(1))
        #expect(planted.load() == .sample(7))
    }

    @Test func temporaryFilesOfKilledWritersAreRemovedOnTheNextSaveAndLiveOnesAreKept() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        // A writer that was killed mid-save: its process is gone, its temporary file is not.
        let dead = try exitedProcessID()
        let leftovers = [".auth.json.\(dead)-1a2b3c.tmp", ".auth.json.\(dead)-4d5e6f.tmp"]
        // A writer still at work (this process's parent stands in for it), and unrelated files.
        let live = [".auth.json.\(getppid())-777.tmp", ".other.json.\(dead)-1.tmp", "notes.txt"]
        for name in leftovers + live {
            try Data("partial".utf8).write(to: directory.file(name))
        }
        try store.save(.sample())

        let entries = try directory.entries()
        #expect(entries.filter { leftovers.contains($0) }.isEmpty)
        #expect(live.allSatisfy(entries.contains))
        #expect(log.events.contains(.abandonedTemporaryFilesRemoved(store.fileURL, count: 2)))
        #expect(store.load() == .sample())
    }

    /// The ID of a process that has exited (and been reaped).
    private func exitedProcessID() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 0"]
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }
}
