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
        record(errorText: String(describing: error))
    }

    func record(errorText: String) {
        lock.lock()
        defer { lock.unlock() }
        errors.append(errorText)
    }

    /// Adds another tally's counts to this one.
    func merge(_ other: Tally) {
        let (otherStatuses, otherErrors) = other.snapshot
        lock.lock()
        defer { lock.unlock() }
        statuses.merge(otherStatuses, uniquingKeysWith: +)
        errors += otherErrors
    }

    var snapshot: (statuses: [Int: Int], errors: [String]) {
        lock.lock()
        defer { lock.unlock() }
        return (statuses, errors)
    }

    /// `50 × 200, 0 errors`.
    var line: String {
        let (statuses, errors) = snapshot
        return (Self.statusList(statuses) + ["\(errors.count) \(errors.count == 1 ? "error" : "errors")"])
            .joined(separator: ", ")
    }

    /// `["48 × 200", "2 × 401"]`, by status.
    static func statusList(_ statuses: [Int: Int]) -> [String] {
        statuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }
    }
}
