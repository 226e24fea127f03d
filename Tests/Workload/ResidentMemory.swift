import Foundation

/// The process's resident memory, where the platform tells it.
public enum ResidentMemory {
    public static var isAvailable: Bool { FileManager.default.fileExists(atPath: "/proc/self/status") }

    /// Resident bytes now (`VmRSS`), or 0 where it cannot be read.
    public static func bytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }
}
