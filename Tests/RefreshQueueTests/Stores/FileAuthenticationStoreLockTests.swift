import Dispatch
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

@Suite("FileAuthenticationStore lock", .timeLimit(.minutes(5)))
struct FileAuthenticationStoreLockTests {
    typealias Store = FileAuthenticationStore<StoredCredentials>

    @Test func aSecondLockIsRefusedUntilTheFirstIsUnlocked() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))

        let first = try store.lock(timeout: 0)
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0.05)) { try store.lock(timeout: 0.05) }
        first.unlock()

        let second = try store.lock(timeout: 0)
        second.unlock()
        #expect(storeTestMode(of: store.lockFileURL) == 0o600)
    }

    @Test func aGenericWrapperCoordinatedOnlyWhenWhatItWrapsIsTakesTheFilesLockForARefresh() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let file = try Store(fileURL: directory.file("auth.json"))
        let wrapped = LoggingStore(inner: file)

        let held = try file.lock(timeout: 0)
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try refreshLock(of: wrapped) }
        held.unlock()
        let lock = try refreshLock(of: wrapped)
        #expect(lock != nil)
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try file.lock(timeout: 0) }
        lock?.unlock()

        let plain = LoggingStore(inner: InMemoryAuthenticationStore<StoredCredentials>())
        #expect(try refreshLock(of: plain) == nil)
    }

    /// The lock as the library asks for it: through `AuthenticationStore` alone, as a generic
    /// function sees a store (a direct call would pick the coordinated method at compile time).
    private func refreshLock<Store: AuthenticationStore>(of store: Store) throws -> (any AuthenticationStoreLock)? {
        try store.refreshLock(timeout: 0)
    }

    @Test func twoStoreObjectsForTheSameFileShareOneLock() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let one = try Store(fileURL: directory.file("auth.json"))
        let other = try FileAuthenticationStore<[String: String]>(fileURL: directory.file("auth.json"))

        let held = try one.lock(timeout: 0)
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try other.lock(timeout: 0) }
        held.unlock()
        try other.lock(timeout: 0).unlock()
    }

    @Test func releasingTheLockObjectUnlocks() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))

        try takeAndDropLock(store)

        #expect(throws: Never.self) { try store.lock(timeout: 0).unlock() }
    }

    private func takeAndDropLock(_ store: Store) throws {
        let lock = try store.lock(timeout: 0)
        #expect(throws: AuthenticationStoreError.self) { try store.lock(timeout: 0) }
        _ = lock
    }

    @Test func unlockingTwiceNeverReleasesALockTakenSince() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        let first = try store.lock(timeout: 0)
        first.unlock()
        let second = try store.lock(timeout: 0)

        first.unlock()

        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0)) { try store.lock(timeout: 0) }
        second.unlock()
    }

    @Test func unlockingFromManyThreadsAtOnceUnlocksOnce() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))

        for _ in 0..<20 {
            let lock = try store.lock(timeout: 0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in lock.unlock() }
            // Released: it can be taken again; and released once: a late unlock of the old object
            // does not release the lock taken since.
            let taken = try store.lock(timeout: 0)
            lock.unlock()
            #expect(throws: AuthenticationStoreError.self) { try store.lock(timeout: 0) }
            taken.unlock()
        }
    }

    @Test func aLockCanBeUsedThroughTheProtocol() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        try store.save(.sample(1))

        let loaded = try refreshUnderLock(store) { _ in .sample(2) }

        #expect(loaded == .sample(2))
        #expect(store.load() == .sample(2))
    }

    /// The pattern the protocol is for: lock, load, save, unlock.
    private func refreshUnderLock<S: CoordinatedAuthenticationStore>(
        _ store: S, refresh: (S.Value?) -> S.Value
    ) throws -> S.Value {
        let lock = try store.lock(timeout: 1)
        defer { lock.unlock() }
        let fresh = refresh(store.load())
        try store.save(fresh)
        return fresh
    }

    // MARK: - Timing

    @Test(.exclusive) func theWaitForAHeldLockIsBoundedByTheTimeout() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        let held = try store.lock(timeout: 0)
        defer { held.unlock() }

        for timeout in [0, -1, TimeInterval.nan] {
            let start = storeTestUptime()
            #expect(throws: AuthenticationStoreError.self) { try store.lock(timeout: timeout) }
            #expect(storeTestUptime() - start < 0.5)
        }

        let start = storeTestUptime()
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 0.2)) { try store.lock(timeout: 0.2) }
        let waited = storeTestUptime() - start
        #expect(waited >= 0.2)
        #expect(waited < 2)
    }

    @Test(.exclusive) func aWaitingLockIsGrantedSoonAfterTheHolderUnlocks() async throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        let held = try store.lock(timeout: 0)

        // When the waiter got the lock, on the test's monotonic clock.
        async let waiter: Result<TimeInterval, any Error> = withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let result = Result { try store.lock(timeout: 120) }
                continuation.resume(
                    returning: result.map { lock in
                        let grantedAt = storeTestUptime()
                        lock.unlock()
                        return grantedAt
                    })
            }
        }
        // Not waiting for a result: giving the waiter time to start waiting before the unlock.
        try await Task.sleep(nanoseconds: 100_000_000)
        let unlockedAt = storeTestUptime()
        held.unlock()

        // Got within the 120 s it would wait (far more than this task may be late to unlock on a
        // loaded machine), and only after the holder let go (however late the waiter started).
        let grantedAt = try await waiter.get()
        #expect(grantedAt >= unlockedAt)
    }

    #if os(Linux)
    /// A waiter's `flock` on a lock file that was deleted and created anew meanwhile, by someone
    /// who now holds the new file's lock, protects nothing: the waiter must not be granted the
    /// lock while that holder has it.
    @Test(.exclusive) func aLockOnALockFileReplacedMeanwhileIsNotGrantedWhileTheNewFileIsHeld() async throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        let lockPath = store.lockFileURL.path
        let first = try store.lock(timeout: 0)
        let waiter = Task {
            await onAThreadOfItsOwn { Result { try store.lock(timeout: 1.5) } }
        }
        // The waiter has opened the old lock file: two descriptors of this process name it.
        let opened = uptimeWhen(timeout: 10) { Self.openDescriptors(naming: lockPath) >= 2 }
        try #require(opened != nil)
        // The file is replaced, and the new one locked by another holder; then the old lock goes.
        #expect(unlink(lockPath) == 0)
        let second = try store.lock(timeout: 0)
        first.unlock()
        let outcome = await waiter.value
        #expect(throws: AuthenticationStoreError.lockTimedOut(after: 1.5)) { try outcome.get().unlock() }
        second.unlock()
    }

    /// How many of this process's descriptors are open on the file at `path`.
    private static func openDescriptors(naming path: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path
        }.count
    }
    #endif

    // MARK: - Other processes

    // `Process` does not exist on iOS, tvOS and watchOS.
    #if os(macOS) || os(Linux)
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"),
            "needs /usr/bin/flock (util-linux) to hold the lock from another process"),
        .exclusive)
    func aLockHeldByAProcessKilledWithSIGKILLIsReleased() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        try store.lock(timeout: 0).unlock()

        // One process, so that killing it really closes every descriptor of the lock: the shell
        // opens the lock file, `flock` locks that descriptor and exits, the shell becomes `sleep`.
        // (`flock FILE sleep 30` would not do: `sleep`, its child, inherits the locked descriptor
        // and keeps the lock after `flock` is killed.)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", #"exec 9<"$1" && /usr/bin/flock 9 && exec sleep 30"#, "sh", store.lockFileURL.path]
        try child.run()
        defer {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            child.waitUntilExit()
        }

        // An external process: poll until it holds the lock.
        var childHoldsLock = false
        let deadline = storeTestUptime() + 10
        while !childHoldsLock && storeTestUptime() < deadline {
            do {
                try store.lock(timeout: 0).unlock()
                usleep(10_000)
            } catch AuthenticationStoreError.lockTimedOut {
                childHoldsLock = true
            }
        }
        try #require(childHoldsLock, "the child process never took the lock")

        #expect(kill(child.processIdentifier, SIGKILL) == 0)
        let start = storeTestUptime()
        let lock = try store.lock(timeout: 5)
        let waited = storeTestUptime() - start
        lock.unlock()

        #expect(waited < 2)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)
    }
    #endif
}

/// A store that wraps another, and is coordinated exactly when the store it wraps is.
private struct LoggingStore<Inner: AuthenticationStore>: AuthenticationStore {
    let inner: Inner

    func load() -> Inner.Value? { inner.load() }
    func read() throws -> Inner.Value? { try inner.read() }
    func save(_ value: Inner.Value) throws { try inner.save(value) }
    func remove() throws { try inner.remove() }
}

extension LoggingStore: CoordinatedAuthenticationStore where Inner: CoordinatedAuthenticationStore {
    func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        try inner.lock(timeout: timeout)
    }
}
