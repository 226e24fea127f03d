import Foundation

#if !FUZZING
@testable import RefreshQueueRedis
#endif

/// The Redis client's reply parser: what a server (or anything answering on its port) sends.
enum RedisFuzzTargets {
    static let all = [FuzzTarget(name: "resp-reply", check: respReply)]

    /// The bound the checks parse within.
    static let bound = 1_024

    /// Feeds `data` to the parser whole and one byte at a time: each must end in replies or a
    /// `RedisError` (a crash is a finding), never hold more than the bound, and both must agree.
    static func respReply(_ data: Data) -> [String] {
        var findings: [String] = []
        let whole = parse([Array(data)])
        let dripped = parse(data.map { [$0] })
        for outcome in [whole, dripped] where outcome.held > bound {
            findings.append("the parser held \(outcome.held) bytes, over its bound of \(bound)")
        }
        // Fed whole, an input over the bound is refused before it is parsed at all.
        if data.count <= bound, whole.values != dripped.values || whole.error != dripped.error {
            findings.append(
                "whole: \(whole.values.count) replies, \(String(describing: whole.error)); "
                    + "dripped: \(dripped.values.count) replies, \(String(describing: dripped.error))")
        }
        return findings
    }

    private struct Outcome {
        var values: [RESPValue] = []
        var error: RedisError?
        var held = 0
    }

    private static func parse(_ chunks: [[UInt8]]) -> Outcome {
        var parser = RESPParser(maximumReplySize: bound)
        var outcome = Outcome()
        do {
            for chunk in chunks {
                try parser.append(chunk)
                outcome.held = max(outcome.held, parser.pendingByteCount)
                while let value = try parser.next() { outcome.values.append(value) }
            }
        } catch {
            outcome.error = error
        }
        return outcome
    }
}
