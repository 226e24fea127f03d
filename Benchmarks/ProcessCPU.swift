import Foundation

/// CPU time this process has used, user and system, from `getrusage`.
///
/// Throughput on a shared machine moves with the neighbours; CPU time per request moves much
/// less, so it tells whether one arm really does more work than the other.
enum ProcessCPU {
    /// Seconds of CPU time used so far by every thread of the process.
    static func seconds() -> Double {
        var usage = rusage()
        #if os(Linux)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return .nan }
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1_000_000
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1_000_000
        return user + system
    }
}
