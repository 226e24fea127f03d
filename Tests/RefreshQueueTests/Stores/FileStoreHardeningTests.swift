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

    // `Process` does not exist on iOS, tvOS and watchOS.
    #if os(macOS) || os(Linux)
    @Test func temporaryFilesOfKilledWritersAreRemovedOnTheNextSaveAndLiveOnesAreKept() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        // A writer that was killed mid-save: its process is gone, its temporary file is not.
        let dead = try exitedProcessID()
        // And one whose writer had this process's ID: a killed writer whose ID this process
        // reuses (every start of a container's entry point is process 1).
        let leftovers = [
            ".auth.json.\(dead)-1a2b3c.tmp", ".auth.json.\(dead)-4d5e6f.tmp", ".auth.json.\(getpid())-5a5b.tmp",
        ]
        // A writer still at work (this process's parent stands in for it), and unrelated files.
        let live = [".auth.json.\(getppid())-777.tmp", ".other.json.\(dead)-1.tmp", "notes.txt"]
        // And one whose writer cannot be found but wrote a moment ago: one in another container,
        // whose process IDs this process cannot see.
        let recent = ".auth.json.\(dead)-9a9b9c.tmp"
        for name in leftovers + live + [recent] {
            try Data("partial".utf8).write(to: directory.file(name))
            if name != recent {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSinceNow: -61)], ofItemAtPath: directory.file(name).path)
            }
        }
        try store.save(.sample())

        let entries = try directory.entries()
        #expect(entries.filter { leftovers.contains($0) }.isEmpty)
        #expect((live + [recent]).allSatisfy(entries.contains))
        #expect(log.events.contains(.abandonedTemporaryFilesRemoved(store.fileURL, count: 3)))
        #expect(store.load() == .sample())
    }

    /// A killed writer's temporary file is taken for abandoned once it is a minute old: at 59 s
    /// it is kept (its writer may be at work in another container), at just over 60 s removed.
    @Test(arguments: [(59.0, true), (60.5, false)])
    func aTemporaryFileIsTakenForAbandonedAtAMinuteUntouched(age: Double, isKept: Bool) throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        let name = ".auth.json.\(try exitedProcessID())-1a2b.tmp"
        try Data("partial".utf8).write(to: directory.file(name))
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: directory.file(name).path)
        try store.save(.sample())
        #expect(try directory.entries().contains(name) == isKept)
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
    #endif

    /// A token file is a few kilobytes: one of up to 16 MiB is read, one byte more counts as
    /// corrupt without being read into memory.
    @Test(arguments: [(0, true), (1, false)])
    func aFileOfUpTo16MiBIsReadAndOneByteMoreIsCorrupt(extra: Int, isRead: Bool) throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        try store.save(.sample())
        let saved = try Data(contentsOf: store.fileURL)
        let padding = Data(repeating: UInt8(ascii: " "), count: (16 << 20) + extra - saved.count)
        try (saved + padding).write(to: store.fileURL)
        #expect((store.load() == .sample()) == isRead)
        #expect(log.events.contains(.corruptFile(store.fileURL)) == !isRead)
    }

    @Test func aSocketAtThePathReadsAsNothingLikeAFIFOAndDoesNotLockTheUserOut() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("s.json"), onEvent: log.handler)
        let listener = try Self.bindUnixSocket(atPath: store.fileURL.path)
        defer { _ = close(listener) }

        // Not an authentication file at all: nothing stored, not "unreadable now".
        #expect(try store.read() == nil)
        #expect(store.load() == nil)
        #expect(log.events.last == .unreadableFile(store.fileURL, errno: EINVAL))
    }

    @Test func aFIFOAtTheLockPathFailsTheLockAtOnceInsteadOfBlocking() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        #expect(mkfifo(store.lockFileURL.path, 0o644) == 0)
        #expect(throws: AuthenticationStoreError.io(operation: "open the lock file", errno: EINVAL)) {
            try store.lock(timeout: 5).unlock()
        }
        // A user who may only read the FIFO: the read-only open must not wait for a writer.
        #expect(chmod(directory.url.path, 0o755) == 0)
        #expect(chmod(store.lockFileURL.path, 0o444) == 0)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? Unprivileged.run {
                #expect(throws: AuthenticationStoreError.self) { try store.lock(timeout: 0.2).unlock() }
            }
            finished.signal()
        }
        let result = finished.wait(timeout: .now() + 10)
        if result == .timedOut {
            // Let the blocked open return, so that the test can end.
            let writer = open(store.lockFileURL.path, O_WRONLY | O_NONBLOCK)
            finished.wait()
            _ = close(writer)
        }
        #expect(result == .success, "the lock waited for a writer on the FIFO")
    }

    @Test func aFileThatCannotBeMadePrivateIsNotReportedAsMadePrivate() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        try store.save(.sample())
        // Another user's file, which this user may read but not change.
        #expect(chmod(directory.url.path, 0o755) == 0)
        #expect(chmod(store.fileURL.path, 0o644) == 0)
        try Unprivileged.run {
            #expect(store.load() == .sample())
        }
        guard geteuid() == 0 else { return }  // Without root, the file was this user's own.
        #expect(storeTestMode(of: store.fileURL) == 0o644)
        #expect(!log.events.contains { if case .permissionsTightened = $0 { true } else { false } })
    }

    @Test func aNameTooLongForItsLockFileIsRefusedUpFront() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let longest = directory.file(String(repeating: "a", count: 245) + ".json")
        let store = try Store(fileURL: longest)
        try store.save(.sample())
        try store.lock(timeout: 0).unlock()
        let tooLong = directory.file(String(repeating: "a", count: 246) + ".json")
        #expect(throws: AuthenticationStoreError.invalidFileURL(tooLong)) { try Store(fileURL: tooLong) }
    }

    /// A listening Unix-domain socket bound at `path`.
    private static func bindUnixSocket(atPath path: String) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        return descriptor
    }
}
