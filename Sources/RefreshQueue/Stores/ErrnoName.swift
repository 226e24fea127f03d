#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names `errno` values for log lines, without `strerror` (which is not thread-safe everywhere).
enum ErrnoName {
    /// `"EACCES (errno 13)"`, or `"errno 1234"` for a value without a name here.
    static func describe(_ code: Int32) -> String {
        guard let name = name(of: code) else { return "errno \(code)" }
        return "\(name) (errno \(code))"
    }

    private static func name(of code: Int32) -> String? {
        switch code {
        case EPERM: return "EPERM"
        case ENOENT: return "ENOENT"
        case EINTR: return "EINTR"
        case EIO: return "EIO"
        case EBADF: return "EBADF"
        case EAGAIN: return "EAGAIN"
        case EACCES: return "EACCES"
        case EBUSY: return "EBUSY"
        case EEXIST: return "EEXIST"
        case EXDEV: return "EXDEV"
        case ENOTDIR: return "ENOTDIR"
        case EISDIR: return "EISDIR"
        case EINVAL: return "EINVAL"
        case ENFILE: return "ENFILE"
        case EMFILE: return "EMFILE"
        case EFBIG: return "EFBIG"
        case ENOSPC: return "ENOSPC"
        case EROFS: return "EROFS"
        case ENAMETOOLONG: return "ENAMETOOLONG"
        case ELOOP: return "ELOOP"
        case ENOLCK: return "ENOLCK"
        case EDQUOT: return "EDQUOT"
        default: return nil
        }
    }
}
