import Foundation

/// The resident set size of this process, from `/proc/self/statm` (Linux only).
enum ResidentMemory {
    /// Whether the resident set size can be read on this platform.
    static var isAvailable: Bool {
        #if os(Linux)
        return true
        #else
        return false
        #endif
    }

    /// Resident bytes now.
    static func bytes() throws -> Int {
        #if os(Linux)
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else {
            throw BenchmarkError("/proc/self/statm has an unexpected format")
        }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        throw BenchmarkError("resident memory is only measured on Linux")
        #endif
    }
}
