import Foundation

/// Why an ``AuthenticationStore`` could not save, remove, or lock.
///
/// No case carries or describes the stored value: ``description`` is safe to log. Equatable, so
/// that code and tests can match a case with its values.
public enum AuthenticationStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``CoordinatedAuthenticationStore/lock(timeout:)`` waited `after` seconds and the lock was
    /// still held by someone else; or a ``FileAuthenticationStore``'s save or removal waited that
    /// long for another one's write lock.
    case lockTimedOut(after: TimeInterval)

    /// The stored file was written by a newer version of the app, in format version `found`;
    /// this version writes `supported`. `save` refuses to overwrite it, so that an older app
    /// cannot destroy what a newer one stored; `remove()` still deletes it.
    case futureFormatVersion(found: Int, supported: Int)

    /// A system call failed: `operation` says what the store was doing, `errno` why.
    case io(operation: String, errno: Int32)

    /// The value could not be encoded (for example a `Double` that is NaN); nothing was written.
    case encodingFailed

    /// The URL given to ``FileAuthenticationStore/init(fileURL:protection:onEvent:)`` cannot name a file: it
    /// is not a `file:` URL, it names a directory, or its file name is longer than 250 bytes (its
    /// lock file, `<name>.lock`, would not fit in a file name).
    case invalidFileURL(URL)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .lockTimedOut(let after):
            return "The authentication store's lock was still held by someone else after \(after) s."
        case .futureFormatVersion(let found, let supported):
            return "The stored authentication has format version \(found), newer than this version supports "
                + "(\(supported)); it was not overwritten. Update the app, or remove the stored authentication."
        case .io(let operation, let errno):
            return "The authentication store could not \(operation): \(ErrnoName.describe(errno))."
        case .encodingFailed:
            return "The authentication could not be encoded; nothing was saved."
        case .invalidFileURL(let url):
            // A non-file URL may carry credentials (user:password@host, a query): show its scheme only.
            guard url.isFileURL else {
                return "The authentication store needs a file URL, not a \(url.scheme ?? "relative") URL."
            }
            if url.lastPathComponent.utf8.count > FileStorePaths.maximumNameLength {
                return "The authentication store's file name is longer than \(FileStorePaths.maximumNameLength) bytes, "
                    + "which leaves no room for its lock file: \(url.path)."
            }
            return "The authentication store needs the URL of a file, not of a directory: \(url.path)."
        }
    }
}

extension AuthenticationStoreError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` is readable on Apple platforms.
    public var errorDescription: String? { description }
}

extension AuthenticationStoreError: TokenFreeError {}
