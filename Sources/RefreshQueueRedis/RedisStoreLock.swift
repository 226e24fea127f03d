import Foundation
import RefreshQueue

/// A held refresh lock of a ``RedisAuthenticationStore``: released once, by whoever calls
/// `unlock()` first or by the release of the last reference, and only if Redis still holds this
/// owner's value.
final class RedisStoreLock: AuthenticationStoreLock, @unchecked Sendable {
    /// Deletes the key only if it still holds the caller's owner value.
    static let compareAndDelete =
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

    private let client: RedisClient
    private let key: String
    private let owner: String
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var released = false

    init(client: RedisClient, key: String, owner: String) {
        self.client = client
        self.key = key
        self.owner = owner
    }

    deinit {
        unlock()
    }

    /// Releases the lock; later calls do nothing. When the server cannot be reached, the lock
    /// expires at its TTL instead.
    func unlock() {
        lock.lock()
        let first = !released
        released = true
        lock.unlock()
        guard first else { return }
        Self.release(key, owner: owner, using: client)
    }

    /// Deletes `key` if it still holds `owner`. When the connection drops before the answer (the
    /// script may not have reached the server), it runs once more, on a new connection: it deletes
    /// only this owner's value, so running it twice is safe, and a lock left behind would block
    /// everyone until its TTL. A server that does not answer in time is not asked again: that
    /// would hold the caller for a second deadline, and the lock expires at its TTL anyway.
    static func release(_ key: String, owner: String, using client: RedisClient) {
        let command = RESPCommand("EVAL", [compareAndDelete, "1", key, owner])
        do {
            _ = try client.run(command)
        } catch {
            guard error == .connectionClosed else { return }
            _ = try? client.run(command)
        }
    }

    /// `<pid>-<32 random hex digits>`: unique to this holder, and says which process it is.
    static func newOwner() -> String {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }
        let padded = random.map { String(repeating: "0", count: 16 - $0.count) + $0 }.joined()
        return "\(ProcessInfo.processInfo.processIdentifier)-\(padded)"
    }

    /// The process id at the start of an owner value.
    static func processID(inOwner owner: String) -> Int32? {
        owner.split(separator: "-").first.flatMap { Int32($0) }
    }
}
