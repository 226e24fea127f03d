import Foundation

/// What a workload's requests came to, counted by name from any thread, with the longest request
/// and the longest wait for a signature.
public final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var byName: [String: Int] = [:]
    private var longestRequest: TimeInterval = 0
    private var longestSigning: TimeInterval = 0

    public init() {}

    /// Adds one to `key`.
    public func count(_ key: String) {
        lock.lock()
        byName[key, default: 0] += 1
        lock.unlock()
    }

    /// Records how long a request took, keeping the longest.
    public func took(_ seconds: TimeInterval) {
        lock.lock()
        longestRequest = max(longestRequest, seconds)
        lock.unlock()
    }

    /// Records how long one wait for a signature (`authorize` or `reauthorize`) took, keeping the
    /// longest: the wait the closure's `refreshTimeout` bounds.
    public func waited(_ seconds: TimeInterval) {
        lock.lock()
        longestSigning = max(longestSigning, seconds)
        lock.unlock()
    }

    /// Every count so far.
    public var counts: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return byName
    }

    /// The longest request so far, in seconds.
    public var longest: TimeInterval {
        lock.lock()
        defer { lock.unlock() }
        return longestRequest
    }

    /// The longest wait for a signature so far, in seconds.
    public var longestWait: TimeInterval {
        lock.lock()
        defer { lock.unlock() }
        return longestSigning
    }

    /// `result key=value …` with the counts, `longest=<seconds>`, `longestWait=<seconds>` and
    /// `extra`, keys sorted: what a worker process prints for its parent.
    public func resultLine(extra: [String: String] = [:]) -> String {
        var fields = counts.mapValues(String.init)
        fields["longest"] = String(format: "%.3f", longest)
        fields["longestWait"] = String(format: "%.3f", longestWait)
        fields.merge(extra) { $1 }
        return (["result"] + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
    }

    /// The fields of the last result line in `lines`.
    public static func parseResult(_ lines: [String]) -> [String: String]? {
        guard let line = lines.last(where: { $0.hasPrefix("result ") }) else { return nil }
        var fields: [String: String] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        return fields
    }
}
