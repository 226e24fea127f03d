import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The POSIX calls behind ``FileAuthenticationStore``: reading whole files, replacing them
/// atomically and durably, creating directories, and opening lock files.
///
/// Every call is retried on `EINTR`, every descriptor is opened with `O_CLOEXEC` (so a child
/// process never inherits a lock or a half-written file), and failures report `errno`, captured
/// right after the call that set it.
enum StoreFileSystem {
    /// The largest file `readFile` reads. An authentication is a few kilobytes; anything much
    /// larger is not one, and must not be read into memory whole.
    static let readLimit = 16 << 20

    enum ReadResult {
        case contents(Data, tightenedFrom: Int?)
        case missing
        case failed(errno: Int32)
        case tooLarge
    }

    /// Reads the whole file at `path`.
    ///
    /// Never through a symbolic link: a link there fails with `ELOOP` (someone could point the
    /// store at a file of theirs). Something other than a regular file fails with `EISDIR` (a
    /// directory) or `EINVAL` (a FIFO, socket or device), without blocking: the file is opened
    /// with `O_NONBLOCK`, so that a FIFO without a writer cannot hang the caller. A file that its
    /// group or others may read or write is made 0600 at once (`tightenedFrom` names the mode it
    /// had).
    static func readFile(atPath path: String) -> ReadResult {
        let (descriptor, openError) = openRetrying(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            switch openError {
            case ENOENT: return .missing
            // A socket cannot be opened at all: ENXIO on Linux, EOPNOTSUPP on Apple systems.
            case ENXIO, EOPNOTSUPP: return .failed(errno: EINVAL)
            default: return .failed(errno: openError)
            }
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failed(errno: errno) }
        // S_IFMT, S_IFREG and S_IFDIR, spelled out: their imported types differ between platforms.
        switch status.st_mode & 0o170000 {
        case 0o100000: break
        case 0o040000: return .failed(errno: EISDIR)
        default: return .failed(errno: EINVAL)
        }
        var tightenedFrom: Int?
        // Best effort: a file owned by someone else (or on a read-only volume) stays as it is, and
        // is not reported as tightened.
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) == 0 {
            tightenedFrom = Int(status.st_mode & 0o777)
        }
        var contents = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let (count, readError) = chunk.withUnsafeMutableBytes { buffer -> (Int, Int32) in
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                return (count, count < 0 ? errno : 0)
            }
            if count > 0 {
                contents.append(contentsOf: chunk[..<count])
                if contents.count > readLimit { return .tooLarge }
            } else if count == 0 {
                return .contents(contents, tightenedFrom: tightenedFrom)
            } else if readError != EINTR {
                return .failed(errno: readError)
            }
        }
    }

    /// Replaces the file at `paths.file` with `data`, atomically and durably, mode 0600.
    ///
    /// Writes a new file next to it (created 0600 with `O_EXCL`, so nobody else can have opened
    /// it), writes every byte, flushes it to disk, renames it over the stored file, and flushes
    /// the directory so that the rename survives a power cut. Readers see the old file or the new
    /// one, never a mix; on any failure the temporary file is removed and the old file is intact.
    static func replaceFile(_ paths: FileStorePaths, with data: Data, protection: FileProtection) throws {
        let (descriptor, temporary) = try createTemporaryFile(paths)
        applyProtection(protection, toPath: temporary)
        var renamed = false
        defer {
            if !renamed { _ = unlink(temporary) }
        }
        do {
            // `open` applied the umask; the stored file is 0600 whatever the umask is.
            if fchmod(descriptor, 0o600) != 0 { throw io("set permissions of the new file", errno) }
            if let error = writeAll(data, to: descriptor) { throw io("write the new file", error) }
            if let error = synchronize(descriptor) { throw io("flush the new file to disk", error) }
        } catch {
            _ = close(descriptor)
            throw error
        }
        // After fsync, close reports nothing new on local file systems; on network ones it may.
        if close(descriptor) != 0 && errno != EINTR { throw io("close the new file", errno) }
        if rename(temporary, paths.file) != 0 { throw io("replace the stored file", errno) }
        renamed = true
        synchronizeDirectory(paths.directory)
    }

    /// How long a temporary file stays untouched before a writer that cannot be found is taken
    /// for dead: a save takes milliseconds, and a writer in another process-ID space (another
    /// container sharing the volume) cannot be found even while it writes.
    static let abandonedTemporaryFileAge: TimeInterval = 60

    /// Deletes the temporary files that writers of `paths.file` left behind when they were killed
    /// mid-save (the file is over a minute old, and its process no longer exists or is this one);
    /// returns how many. Called under the write lock, so this process is writing none of them:
    /// one carrying its process ID was left by a killed writer whose ID it reuses (every start of
    /// a container's entry point is process 1). Those of other live processes are theirs to finish.
    static func removeAbandonedTemporaryFiles(_ paths: FileStorePaths, now: Date = Date()) -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: paths.directory) else { return 0 }
        var removed = 0
        let prefix = paths.directory == "/" ? "/" : paths.directory + "/"
        for entry in entries {
            guard let writer = paths.writer(ofTemporaryFile: entry), writer > 0 else { continue }
            guard writer == getpid() || (kill(writer, 0) != 0 && errno == ESRCH) else { continue }
            let modified = (try? FileManager.default.attributesOfItem(atPath: prefix + entry))?[.modificationDate]
            guard let modified = modified as? Date,
                now.timeIntervalSince(modified) >= abandonedTemporaryFileAge
            else { continue }
            if unlink(prefix + entry) == 0 { removed += 1 }
        }
        return removed
    }

    /// Gives the file at `path` the data-protection class `protection`, on the platforms that have
    /// data protection (the iOS family); nothing elsewhere. Set on the new file before it replaces
    /// the stored one, so that every save applies it. Best effort: a volume without data
    /// protection ignores it.
    static func applyProtection(_ protection: FileProtection, toPath path: String) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        try? FileManager.default.setAttributes([.protectionKey: protection.fileProtectionType], ofItemAtPath: path)
        #endif
    }

    /// Deletes the file at `path`; returns whether there was one.
    static func removeFile(atPath path: String, directory: String) throws -> Bool {
        guard unlink(path) == 0 else {
            let error = errno
            guard error == ENOENT else { throw io("remove the stored file", error) }
            return false
        }
        synchronizeDirectory(directory)
        return true
    }

    /// Creates `path` and any missing parent, each with mode 0700 whatever the umask is.
    /// Directories that exist already are left as they are.
    static func makeDirectories(atPath path: String) throws {
        if mkdir(path, 0o700) == 0 {
            _ = chmod(path, 0o700)
            return
        }
        let error = errno
        switch error {
        case EEXIST:
            return
        case ENOENT:
            guard let parent = parent(of: path) else { throw io("create the directory", error) }
            try makeDirectories(atPath: parent)
            if mkdir(path, 0o700) == 0 {
                _ = chmod(path, 0o700)
            } else if errno != EEXIST {
                throw io("create the directory", errno)
            }
        default:
            throw io("create the directory", error)
        }
    }

    /// Opens (creating it 0600 if needed) the lock file at `path`, for `flock`; never through a
    /// symbolic link, and never blocking: a FIFO there (which a read-only open would wait on for a
    /// writer) or anything else that is not a regular file fails with `EINVAL`.
    ///
    /// Read-write where possible: where `flock` is emulated with `fcntl` locks (Linux on NFS or
    /// SMB), an exclusive lock needs a writable descriptor. Read-only otherwise, so that a user can
    /// still share a lock file it cannot write.
    static func openLockFile(atPath path: String) throws -> Int32 {
        let flags = O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW
        var (descriptor, error) = openRetrying(path, O_RDWR | flags, 0o600)
        if descriptor < 0 { (descriptor, error) = openRetrying(path, O_RDONLY | flags, 0o600) }
        guard descriptor >= 0 else {
            throw io("open the lock file", [ENXIO, EOPNOTSUPP].contains(error) ? EINVAL : error)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & 0o170000 == 0o100000 else {
            _ = close(descriptor)
            throw io("open the lock file", EINVAL)
        }
        return descriptor
    }

    /// Whether `descriptor` is open on the file that `path` names now (same device and inode).
    ///
    /// False when the file was deleted or replaced after it was opened.
    static func isOpen(_ descriptor: Int32, onFileAt path: String) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    // MARK: - Helpers

    private static func createTemporaryFile(_ paths: FileStorePaths) throws -> (Int32, String) {
        var attempts = 0
        while true {
            let temporary = paths.temporaryFile(processID: getpid())
            let (descriptor, error) = openRetrying(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return (descriptor, temporary) }
            attempts += 1
            // EEXIST: a name taken by chance (or by an attacker); another random name will do.
            guard error == EEXIST, attempts < 8 else { throw io("create a temporary file", error) }
        }
    }

    /// `open`, retried on `EINTR`; returns the descriptor (or -1) and the `errno` of a failure.
    private static func openRetrying(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> (Int32, Int32) {
        while true {
            let descriptor = open(path, flags, mode)
            if descriptor >= 0 { return (descriptor, 0) }
            let error = errno
            if error != EINTR { return (-1, error) }
        }
    }

    /// Writes every byte of `data`, however many calls it takes; returns the `errno` of a failure.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written == 0 {
                    return EIO
                } else {
                    let error = errno
                    if error != EINTR { return error }
                }
            }
            return nil
        }
    }

    /// Flushes the file to stable storage; returns the `errno` of a failure.
    ///
    /// On Apple platforms `fsync` only hands the data to the drive, which may keep it in its cache:
    /// `F_FULLFSYNC` asks the drive to write it, and `fsync` is the fallback where that is not
    /// supported.
    private static func synchronize(_ descriptor: Int32) -> Int32? {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return nil }
        #endif
        while fsync(descriptor) != 0 {
            let error = errno
            if error != EINTR { return error }
        }
        return nil
    }

    /// Flushes a directory, so that a rename or unlink in it is durable. Best effort: some file
    /// systems cannot open or flush directories, and the change itself has already happened.
    private static func synchronizeDirectory(_ path: String) {
        let (descriptor, _) = openRetrying(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = synchronize(descriptor)
        _ = close(descriptor)
    }

    /// The parent directory of an absolute path, or nil for `/`.
    private static func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func io(_ operation: String, _ error: Int32) -> AuthenticationStoreError {
        .io(operation: operation, errno: error)
    }
}
