import Foundation
import RefreshQueue

/// Writes decided on one reading: each compares what the key holds with what was read and
/// writes in one script, which Redis runs without interleaving any other command, so that a
/// logout or a login by another instance in between wins over a refresh's save.
extension RedisAuthenticationStore: RevisionedAuthenticationStore {
    /// Replaces (`set`) or deletes (`del`) the key's value if it still holds ARGV[2] (ARGV[1]
    /// is `1`), or nothing (ARGV[1] is `0`); answers 1 when it wrote, 0 otherwise.
    private static func compareAnd(_ write: String) -> String {
        """
        local expected = false
        if ARGV[1] == '1' then expected = ARGV[2] end
        if redis.call('get', KEYS[1]) ~= expected then return 0 end
        redis.call(\(write))
        return 1
        """
    }

    /// What ``read()`` returns, with the revision it was read at: the stored bytes.
    package func readRevision() throws -> (value: Value?, revision: StoredRevision) {
        switch try client.run(RESPCommand("GET", [key])) {
        case .null:
            return (nil, StoredRevision(bytes: nil))
        case .bulkString(let bytes):
            return (try? JSONDecoder().decode(Value.self, from: Data(bytes)), StoredRevision(bytes: Data(bytes)))
        default:
            throw RedisError.protocolViolation("GET answered with something other than a string")
        }
    }

    /// Stores `value` if the key still holds `revision`; false, and nothing written, otherwise.
    package func save(_ value: Value, ifStill revision: StoredRevision) throws -> Bool {
        let data = try encoded(value)
        return try runCompared(Self.compareAnd("'set', KEYS[1], ARGV[3]"), revision: revision, value: data)
    }

    /// Deletes the key's value if it still holds `revision`; false, and nothing deleted, otherwise.
    package func remove(ifStill revision: StoredRevision) throws -> Bool {
        try runCompared(Self.compareAnd("'del', KEYS[1]"), revision: revision, value: nil)
    }

    private func runCompared(_ script: String, revision: StoredRevision, value: Data?) throws -> Bool {
        var arguments: [[UInt8]] = [Array("EVAL".utf8), Array(script.utf8), Array("1".utf8), Array(key.utf8)]
        arguments.append(Array((revision.bytes == nil ? "0" : "1").utf8))
        arguments.append(Array(revision.bytes ?? Data()))
        if let value { arguments.append(Array(value)) }
        switch try client.run(RESPCommand(raw: arguments)) {
        case .integer(let written):
            return written == 1
        default:
            throw RedisError.protocolViolation("EVAL answered with something other than an integer")
        }
    }
}
