import Foundation

/// Counts how the requests ended: HTTP status codes and errors.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int: Int] = [:]
    private var errors: [String] = []

    func record(status: Int) {
        lock.lock()
        defer { lock.unlock() }
        statuses[status, default: 0] += 1
    }

    func record(error: any Error) {
        lock.lock()
        defer { lock.unlock() }
        errors.append(String(describing: error))
    }

    var snapshot: (statuses: [Int: Int], errors: [String]) {
        lock.lock()
        defer { lock.unlock() }
        return (statuses, errors)
    }
}
