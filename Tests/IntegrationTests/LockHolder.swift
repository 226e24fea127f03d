#if os(Linux)
import Foundation

/// Which process holds a `flock` on a file, from the kernel's list in `/proc/locks`.
enum LockHolder {
    /// The process id holding a `flock` on the file at `path`, or `nil` when nobody holds one (or
    /// the file does not exist).
    static func pid(ofFileAt path: String) -> Int32? {
        var status = stat()
        guard stat(path, &status) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return nil }
        // "1: FLOCK  ADVISORY  WRITE 4242 00:2e:131090 0 EOF"; waiters have "->" before FLOCK.
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", let pid = Int32(fields[4]) else { continue }
            let device = fields[5].split(separator: ":")
            guard device.count == 3, UInt64(device[2]) == UInt64(status.st_ino) else { continue }
            return pid
        }
        return nil
    }
}
#endif
