import Foundation

/// An ``AuthenticationStore`` that keeps the authentication in a JSON file only its owner can
/// read, shared safely by several processes.
///
/// The file holds `{"formatVersion": 1, "value": …}`, the value encoded with `JSONEncoder` (dates
/// as seconds since 1970). It is written the safe way:
/// - **Private**: mode 0600 whatever the umask, from the moment it is created; its directory, if
///   the store creates it, is 0700. A file found readable or writable by its group or others is
///   made 0600 when it is loaded, and reported. The file itself is never read through a symbolic
///   link (the directories on its path may be links).
/// - **Atomic**: `save` writes a temporary file next to it and renames it over the old one, so
///   readers (in this process or another) see the old authentication or the new one, never half
///   of one, and a crash mid-save leaves the old one intact.
/// - **Durable**: the data and the rename are flushed to disk before `save` returns, so a
///   rotated refresh token is not lost to a power cut.
/// - **Forgiving**: a missing, corrupt or unreadable file loads as nil (the user logs in again);
///   `onEvent` says which.
/// - **Coordinated**: ``lock(timeout:)`` takes an exclusive `flock` on `<file>.lock`, so that the
///   processes sharing the file (an app and its extensions, several CLI invocations) refresh one
///   at a time. The kernel releases the lock if its holder dies.
/// - **Serialized**: every save and removal holds a short exclusive `flock` on a hidden
///   `.<name>.write.lock` (the name cut to its first 40 Unicode scalars, as in the names of
///   temporary files) while it checks what the file holds and writes, so that a write decided on
///   one reading (a refresh saving over the token it refreshed, a check for a newer version's
///   file) never lands on another: a logout or a login in another process at that moment wins.
///
/// ```swift
/// let url = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
///     .appendingPathComponent("MyApp/authentication.json")
/// let store = try FileAuthenticationStore<SpotifyAuthentication>(fileURL: url)
///
/// try store.save(authentication)
/// let restored = store.load()
/// ```
///
/// Every method may be called from any thread, also at the same time. The methods do blocking
/// file I/O (and ``lock(timeout:)`` waits): call them off the main thread where that matters.
/// On Apple platforms consider the keychain for secrets; this store suits macOS apps, command-line
/// tools, servers and Linux.
///
/// A process killed in the middle of `save` may leave a hidden temporary file
/// (`.<name>.<pid>-<random>.tmp`, mode 0600) next to the stored file; the stored file itself is
/// intact, and the next `save` deletes the temporary files over a minute old whose writing
/// process no longer exists (or has the ID of the process saving: it reuses a dead writer's).
/// Never delete the lock files while the store is in use: the store detects it and locks the new
/// file, but a process holding the old one would not notice.
public final class FileAuthenticationStore<Value: Codable & Sendable>: CoordinatedAuthenticationStore,
    RevisionedAuthenticationStore
{
    /// The JSON file the authentication is kept in.
    public let fileURL: URL

    /// The file that ``lock(timeout:)`` locks: `fileURL` with `.lock` appended, in the same
    /// directory. It is created on the first lock and never deleted; it stays empty. (Saves and
    /// removals lock another file, `.<name>.write.lock`, kept the same way.)
    public var lockFileURL: URL { lockURL }

    /// The data-protection class every save gives the file on iOS, tvOS and watchOS.
    public let protection: FileProtection

    private let lockURL: URL
    private let paths: FileStorePaths
    private let onEvent: (@Sendable (AuthenticationStoreEvent) -> Void)?
    /// The longest a save or a removal waits for another one to finish, in seconds: 10, or less
    /// in tests. Each holds the write lock for the milliseconds of a read and a write; only a
    /// process stopped while holding it (in a debugger, say) keeps the others waiting that long.
    private let writeLockTimeout: TimeInterval

    /// Creates a store for the file at `fileURL`; the file itself need not exist.
    ///
    /// The file's directory is created (mode 0700, with any missing parent) if it is missing. If
    /// that fails, the store is still created: loading finds nothing, and `save` and `lock` try
    /// again and throw the reason.
    ///
    /// - Parameters:
    ///   - fileURL: The JSON file, as a `file:` URL.
    ///   - protection: On iOS, tvOS and watchOS, the file's data-protection class, applied on
    ///     every save (default ``FileProtection/completeUntilFirstUserAuthentication``, so that a
    ///     refresh in the background after the first unlock can read it). Ignored elsewhere.
    ///   - onEvent: Receives an ``AuthenticationStoreEvent`` when a file is corrupt, unreadable or
    ///     from a newer version, and after each save and removal. Called synchronously on the
    ///     thread calling the store, after the call that reports it has released the write lock. (A
    ///     refresh through the store reads and saves while it holds ``lock(timeout:)``: a handler
    ///     must not wait for that lock.)
    /// - Throws: ``AuthenticationStoreError/invalidFileURL(_:)`` when `fileURL` is not a file URL,
    ///   names a directory (a directory URL, or the path of a directory that exists, with or
    ///   without its final slash), or has a file name longer than 250 bytes (its lock file,
    ///   `<name>.lock`, would not fit in a file name). Never for a missing file or directory.
    public convenience init(
        fileURL: URL, protection: FileProtection = .completeUntilFirstUserAuthentication,
        onEvent: (@Sendable (AuthenticationStoreEvent) -> Void)? = nil
    ) throws {
        try self.init(fileURL: fileURL, protection: protection, writeLockTimeout: 10, onEvent: onEvent)
    }

    /// The public initializer, with the write lock's timeout.
    init(
        fileURL: URL, protection: FileProtection = .completeUntilFirstUserAuthentication,
        writeLockTimeout: TimeInterval, onEvent: (@Sendable (AuthenticationStoreEvent) -> Void)? = nil
    ) throws {
        var isDirectory: ObjCBool = false
        guard let paths = FileStorePaths(fileURL),
            !(FileManager.default.fileExists(atPath: paths.file, isDirectory: &isDirectory) && isDirectory.boolValue)
        else { throw AuthenticationStoreError.invalidFileURL(fileURL) }
        self.fileURL = fileURL
        self.protection = protection
        self.lockURL = URL(fileURLWithPath: paths.lockFile, isDirectory: false)
        self.paths = paths
        self.onEvent = onEvent
        self.writeLockTimeout = writeLockTimeout
        try? StoreFileSystem.makeDirectories(atPath: paths.directory)
    }

    /// The stored authentication, or nil when there is none or it cannot be read.
    ///
    /// A missing file is nil without an event. A file that is not a stored authentication, or
    /// whose value does not decode as `Value`, is nil with ``AuthenticationStoreEvent/corruptFile(_:)``;
    /// one that cannot be read, nil with ``AuthenticationStoreEvent/unreadableFile(_:errno:)``; one
    /// from a newer format version, nil with
    /// ``AuthenticationStoreEvent/futureFormatVersion(_:found:supported:)``. Files larger than
    /// 16 MiB are not read; they count as corrupt. A directory, FIFO, socket or device at the
    /// file's path is unreadable (`EISDIR`, or `EINVAL`), and never blocks the caller; so is a
    /// symbolic link (`ELOOP`), which is never followed. A file its group or others may access is
    /// made 0600 first, with ``AuthenticationStoreEvent/permissionsTightened(_:found:)``.
    public func load() -> Value? {
        (try? read()) ?? nil
    }

    /// The stored authentication, or nil when there is none; throws when the file exists but
    /// cannot be read now.
    ///
    /// Like ``load()``, but a file that cannot be opened or read because of the device's data
    /// protection, its permissions (`EACCES`, `EPERM`) or the system (`EIO`, out of descriptors)
    /// throws ``AuthenticationStoreError/io(operation:errno:)`` instead of reading as "no
    /// authentication": the user is not logged out, and nothing must be saved over it. What is
    /// not an authentication file at all (a directory, a FIFO, a symbolic link) and what is
    /// corrupt still read as nil, with their events.
    public func read() throws -> Value? {
        try readRevision().value
    }

    /// What ``read()`` returns, with the revision it was read at: the file's bytes.
    package func readRevision() throws -> (value: Value?, revision: StoredRevision) {
        let found = StoreFileSystem.readFile(atPath: paths.file)
        let revision = Self.revision(of: found)
        let contents: Data
        switch found {
        case .missing:
            return (nil, revision)
        case .failed(let error):
            emit(.unreadableFile(fileURL, errno: error))
            if !Self.notAFile.contains(error) {
                throw AuthenticationStoreError.io(operation: "read the stored file \(paths.file)", errno: error)
            }
            return (nil, revision)
        case .tooLarge:
            emit(.corruptFile(fileURL))
            return (nil, revision)
        case .contents(let data, let tightenedFrom):
            if let tightenedFrom { emit(.permissionsTightened(fileURL, found: tightenedFrom)) }
            contents = data
        }
        switch StoredAuthenticationFormat.decode(Value.self, from: contents) {
        case .value(let value):
            return (value, revision)
        case .corrupt:
            emit(.corruptFile(fileURL))
            return (nil, revision)
        case .futureVersion(let found):
            emit(.futureFormatVersion(fileURL, found: found, supported: StoredAuthenticationFormat.currentVersion))
            return (nil, revision)
        }
    }

    /// The revision of what a read found: its bytes, or nothing.
    private static func revision(of found: StoreFileSystem.ReadResult) -> StoredRevision {
        if case .contents(let data, _) = found { return StoredRevision(bytes: data) }
        return StoredRevision(bytes: nil)
    }

    /// The errors of a path that holds no authentication file at all (a directory, a FIFO, a
    /// socket, a symbolic link): it reads as nothing, and a save replaces it. Any other error is
    /// a file that cannot be read now.
    private static var notAFile: [Int32] { [EISDIR, EINVAL, ELOOP, ENOTDIR] }

    /// Saves `value`, atomically and durably, in a file of mode 0600.
    ///
    /// When it returns, the file on disk holds `value`. When it throws, the file is as it was and
    /// no temporary file is left behind. A corrupt file, or something that is not an
    /// authentication file at all (a directory aside), is replaced; the directory is created again
    /// if it was deleted. A file that exists but cannot be read now (its permissions, the
    /// device's data protection, an I/O error) is not: it may hold a newer version's or another
    /// session's authentication. ``remove()`` deletes it whatever it holds.
    ///
    /// - Throws: ``AuthenticationStoreError/futureFormatVersion(found:supported:)`` when the file
    ///   was written by a newer version (it is left untouched),
    ///   ``AuthenticationStoreError/encodingFailed`` when `value` cannot be encoded,
    ///   ``AuthenticationStoreError/io(operation:errno:)`` when the file cannot be read now or
    ///   writing fails, and ``AuthenticationStoreError/lockTimedOut(after:)`` when another save or
    ///   removal kept the write lock for longer than 10 seconds.
    public func save(_ value: Value) throws {
        _ = try save(value, if: { _ in true })
    }

    /// Saves `value` if the file still holds `revision`, deciding and writing under the write
    /// lock; returns false, and writes nothing, when it holds something else.
    package func save(_ value: Value, ifStill revision: StoredRevision) throws -> Bool {
        try save(value, if: { Self.revision(of: $0) == revision })
    }

    private func save(_ value: Value, if isCurrent: (StoreFileSystem.ReadResult) -> Bool) throws -> Bool {
        let data: Data
        do {
            data = try StoredAuthenticationFormat.encode(value)
        } catch {
            // The encoder's error may quote the value: it is not passed on.
            throw AuthenticationStoreError.encodingFailed
        }
        try StoreFileSystem.makeDirectories(atPath: paths.directory)
        return try underWriteLock { events in
            let found = StoreFileSystem.readFile(atPath: paths.file)
            guard isCurrent(found) else { return false }
            switch found {
            case .contents(let existing, _):
                if let found = StoredAuthenticationFormat.formatVersion(of: existing),
                    found > StoredAuthenticationFormat.currentVersion
                {
                    throw AuthenticationStoreError.futureFormatVersion(
                        found: found, supported: StoredAuthenticationFormat.currentVersion)
                }
            case .failed(let error) where !Self.notAFile.contains(error):
                // Unreadable now, not absent: what it holds is unknown, so it is not overwritten.
                throw AuthenticationStoreError.io(operation: "read the stored file \(paths.file)", errno: error)
            case .missing, .failed, .tooLarge:
                break
            }
            let abandoned = StoreFileSystem.removeAbandonedTemporaryFiles(paths)
            if abandoned > 0 { events.append(.abandonedTemporaryFilesRemoved(fileURL, count: abandoned)) }
            try StoreFileSystem.replaceFile(paths, with: data, protection: protection)
            events.append(.saved(fileURL))
            return true
        }
    }

    /// Deletes the file, whatever it holds (also one from a newer format version). A missing file
    /// is not an error. The lock files are kept.
    ///
    /// - Throws: ``AuthenticationStoreError/io(operation:errno:)`` when the file exists but cannot
    ///   be deleted, and ``AuthenticationStoreError/lockTimedOut(after:)`` when another save or
    ///   removal kept the write lock for longer than 10 seconds.
    public func remove() throws {
        _ = try remove(if: { _ in true })
    }

    /// Deletes the file if it still holds `revision`, deciding and deleting under the write lock;
    /// returns false, and deletes nothing, when it holds something else.
    package func remove(ifStill revision: StoredRevision) throws -> Bool {
        try remove(if: { Self.revision(of: $0) == revision })
    }

    private func remove(if isCurrent: (StoreFileSystem.ReadResult) -> Bool) throws -> Bool {
        do {
            return try underWriteLock { events in
                guard isCurrent(StoreFileSystem.readFile(atPath: paths.file)) else { return false }
                if try StoreFileSystem.removeFile(atPath: paths.file, directory: paths.directory) {
                    events.append(.removed(fileURL))
                }
                return true
            }
        } catch AuthenticationStoreError.io(_, let error) where error == ENOENT {
            // The directory is gone, so the file is too.
            return isCurrent(.missing)
        }
    }

    /// Runs `body` holding the write lock, then reports the events it collected once the lock
    /// is released: an `onEvent` handler that saves again must not wait for its own lock.
    ///
    /// On iOS, tvOS and watchOS the lock is held inside background time: a suspended app holding
    /// a file lock in a shared container is killed by the system. On a file system without
    /// `flock` (some network mounts), `body` runs without the lock, as it would have to anyway.
    private func underWriteLock<Outcome>(
        _ body: (inout [AuthenticationStoreEvent]) throws -> Outcome
    ) throws -> Outcome {
        var events: [AuthenticationStoreEvent] = []
        defer { events.forEach(emit) }
        // A write takes milliseconds: should the system take the time back meanwhile, it ends.
        let activity = BackgroundActivity.begin(reason: "Saving the authentication", onExpiry: {})
        defer { activity.end() }
        let lock: FileStoreLock?
        do {
            lock = try FileStoreLock.acquire(path: paths.writeLockFile, timeout: writeLockTimeout)
        } catch AuthenticationStoreError.io(_, let error) where [ENOLCK, ENOTSUP, EOPNOTSUPP].contains(error) {
            lock = nil
        }
        defer { lock?.unlock() }
        return try body(&events)
    }

    /// Takes an exclusive lock on ``lockFileURL``, waiting at most `timeout` seconds.
    ///
    /// The lock is an advisory `flock`: it excludes every other ``lock(timeout:)`` on the same
    /// file, in this process (even through another store object) or any other, and is released
    /// by the kernel if the holding process dies, even by `kill -9`. It does not stop plain
    /// `load` and `save`, which are safe without it; take it around "load, refresh, save" so that
    /// one process refreshes and the others find its result.
    ///
    /// The calling thread blocks while it waits, polling every 1–20 ms.
    ///
    /// - Throws: ``AuthenticationStoreError/lockTimedOut(after:)`` when the lock is still held
    ///   elsewhere after `timeout` seconds (at once when `timeout` is zero or less), or
    ///   ``AuthenticationStoreError/io(operation:errno:)`` when the lock file cannot be opened.
    public func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        try StoreFileSystem.makeDirectories(atPath: paths.directory)
        return try FileStoreLock.acquire(path: paths.lockFile, timeout: timeout)
    }

    private func emit(_ event: AuthenticationStoreEvent) {
        onEvent?(event)
    }
}
