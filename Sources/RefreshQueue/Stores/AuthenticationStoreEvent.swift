import Foundation

/// Something a ``FileAuthenticationStore`` noticed or did, for logging and metrics.
///
/// Pass a handler as the store's `onEvent`. It is called on the thread that called the store's
/// method, before that method returns, so keep it short. Events name the file, never its
/// contents: ``description`` is safe to log. Equatable, so that tests can compare them.
///
/// ```swift
/// let store = try FileAuthenticationStore<SpotifyAuthentication>(fileURL: url) { event in
///     logger.notice("\(event.description)")
/// }
/// ```
public enum AuthenticationStoreEvent: Sendable, Equatable, CustomStringConvertible {
    /// The file is not JSON, or not an authentication this app can decode; it was read as "no
    /// authentication". The next `save` replaces it.
    case corruptFile(URL)

    /// The file exists but could not be read (for example `EACCES`; `EISDIR` for a directory,
    /// `EINVAL` for a FIFO, socket or device). `load()` reads it as "no authentication";
    /// `read()`, which closures use, does so only for what is not a file at all (`EISDIR`,
    /// `EINVAL`, `ELOOP`, `ENOTDIR`) and otherwise throws
    /// ``AuthenticationStoreError/io(operation:errno:)``, so that the user is not logged out.
    case unreadableFile(URL, errno: Int32)

    /// The file was written by a newer version of the app, in format version `found`; this
    /// version reads up to `supported`. It was read as "no authentication", and `save` refuses
    /// to overwrite it.
    case futureFormatVersion(URL, found: Int, supported: Int)

    /// The file could be read or written by its group or by others (its mode was `found`); it was
    /// made readable by its owner only (0600) before it was read.
    case permissionsTightened(URL, found: Int)

    /// Temporary files that writers killed in the middle of a save had left next to the file
    /// (`count` of them) were deleted.
    case abandonedTemporaryFilesRemoved(URL, count: Int)

    /// An authentication was saved to the file.
    case saved(URL)

    /// The file was deleted by `remove()`. Not sent when there was no file to delete.
    case removed(URL)

    /// One line for a log. Names the file, never its contents.
    public var description: String {
        switch self {
        case .corruptFile(let url):
            return "authentication file \(url.path) is corrupt; read as no authentication"
        case .unreadableFile(let url, let errno):
            return "authentication file \(url.path) could not be read (\(ErrnoName.describe(errno)))"
        case .futureFormatVersion(let url, let found, let supported):
            return "authentication file \(url.path) has format version \(found), newer than the supported "
                + "\(supported); read as no authentication and not overwritten"
        case .permissionsTightened(let url, let found):
            return "authentication file \(url.path) had mode \(String(found, radix: 8)); made 600"
        case .abandonedTemporaryFilesRemoved(let url, let count):
            return
                "removed \(count) temporary \(count == 1 ? "file" : "files") left next to \(url.path) by killed writers"
        case .saved(let url):
            return "authentication saved to \(url.path)"
        case .removed(let url):
            return "authentication file \(url.path) removed"
        }
    }
}
