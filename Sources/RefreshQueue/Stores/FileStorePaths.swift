import Foundation

/// The file-system paths a ``FileAuthenticationStore`` works with, derived once from its URL.
struct FileStorePaths: Sendable {
    /// The stored file, absolute.
    let file: String
    /// The directory that holds the file, its lock file and its temporary files.
    let directory: String
    /// `file` + `.lock`.
    let lockFile: String
    /// The file's name, without its directory.
    let name: String
    /// The hidden file that every save and removal locks: `.<name>.write.lock`, the name cut to
    /// its first 40 scalars as in temporary files.
    let writeLockFile: String

    /// The longest file name a store takes, in bytes: its lock file, `<name>.lock`, must fit in
    /// the 255 bytes a name may have on the file systems the package runs on.
    static let maximumNameLength = 250

    /// Nil when `url` cannot name a file: not a `file:` URL, a directory URL, a path that ends
    /// in `.`, `..` or `/`, or contains NUL, or a name longer than ``maximumNameLength`` bytes.
    init?(_ url: URL) {
        guard url.isFileURL, !url.hasDirectoryPath else { return nil }
        let path = url.absoluteURL.standardizedFileURL.path
        guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.utf8.contains(0),
            let slash = path.lastIndex(of: "/")
        else { return nil }
        let name = String(path[path.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != "..", name.utf8.count <= Self.maximumNameLength else {
            return nil
        }
        self.file = path
        self.directory = slash == path.startIndex ? "/" : String(path[..<slash])
        self.lockFile = path + ".lock"
        self.name = name
        self.writeLockFile = (directory == "/" ? "/" : directory + "/") + Self.hiddenPrefix(of: name) + "write.lock"
    }

    /// A fresh name for a temporary file next to the stored one: hidden, unique, short enough for
    /// any file system however long the stored file's name is, and naming the process that
    /// writes it, so that a later save can tell one left by a killed writer:
    /// `.<name>.<pid>-<random>.tmp`.
    func temporaryFile(processID: Int32) -> String {
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        let prefix = directory == "/" ? "/" : directory + "/"
        return "\(prefix)\(temporaryPrefix)\(processID)-\(random).tmp"
    }

    /// What every temporary file's name starts with: `.<name>.`, the name cut to its first 40
    /// scalars.
    var temporaryPrefix: String {
        Self.hiddenPrefix(of: name)
    }

    /// A dot, at most 40 scalars (160 bytes) of `name` (within NAME_MAX with any suffix the store
    /// adds), a dot.
    private static func hiddenPrefix(of name: String) -> String {
        ".\(String(name.unicodeScalars.prefix(40)))."
    }

    /// The process that wrote the temporary file called `entry` (a name in ``directory``), or
    /// `nil` when `entry` is not one of this file's temporary files.
    func writer(ofTemporaryFile entry: String) -> Int32? {
        guard entry.hasPrefix(temporaryPrefix), entry.hasSuffix(".tmp") else { return nil }
        let middle = entry.dropFirst(temporaryPrefix.count).dropLast(4)
        guard let dash = middle.firstIndex(of: "-") else { return nil }
        return Int32(middle[..<dash])
    }
}
