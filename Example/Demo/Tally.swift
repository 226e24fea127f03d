import Foundation

/// Counts how the requests ended (HTTP status codes and errors) and how many of them waited
/// for a refresh.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int: Int] = [:]
    private var errors: [String] = []
    private var holds = Holds()

    /// Requests held by refreshes: by the first one (the token had expired before the burst) and
    /// by any later one (refresh ahead should leave none).
    struct Holds: Sendable {
        var refreshes = 0
        var first = 0
        var later = 0
    }

    /// Records a ``RefreshEvent/refreshHeldRequests(count:duration:)``.
    func record(held count: Int) {
        lock.lock()
        defer { lock.unlock() }
        if holds.refreshes == 0 { holds.first += count } else { holds.later += count }
        holds.refreshes += 1
    }

    var held: Holds {
        lock.lock()
        defer { lock.unlock() }
        return holds
    }

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
        let otherHolds = other.held
        lock.lock()
        defer { lock.unlock() }
        statuses.merge(otherStatuses, uniquingKeysWith: +)
        errors += otherErrors
        holds.refreshes += otherHolds.refreshes
        holds.first += otherHolds.first
        holds.later += otherHolds.later
    }

    /// Sets the counts of requests held, as a worker reported them.
    func setHeld(first: Int, later: Int) {
        lock.lock()
        defer { lock.unlock() }
        holds.first = first
        holds.later = later
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
