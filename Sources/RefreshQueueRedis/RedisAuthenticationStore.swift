import Foundation
import RefreshQueue

/// An authentication stored in Redis, shared by every process and machine that uses the same
/// server and key, with a lock so that only one of them refreshes at a time.
///
/// ```swift
/// let store = RedisAuthenticationStore<OAuth2Token>(
///     key: "spotify:token",
///     configuration: RedisConfiguration(host: "10.0.0.5", password: redisPassword),
///     lockTTL: 120)
/// let authentication = RefreshingRequestClosure(client: client, store: store)
/// ```
///
/// Every instance of a service that shares one OAuth token with a rotating refresh token needs
/// this: two instances refreshing at once send the same refresh token twice, and the server
/// revokes the whole family. Through this store a refresh takes the lock, reads what is stored,
/// adopts a token another instance refreshed meanwhile, and otherwise refreshes and saves
/// before it lets go.
///
/// The lock is `SET <key>:lock <owner> NX PX <ttl>` with a random owner value, released by a
/// script that deletes it only if it still holds that owner (so an instance never releases a
/// lock that expired and was taken by another). An instance killed while it holds the lock
/// blocks the others for at most `lockTTL`: give it the closure's `abandonAfter` (the default,
/// 120 s, is the closure's default for any `refreshTimeout` up to 30 s), so that the lock never
/// expires while its holder's refresh may still be running, and never outlives it by more.
///
/// What it does not do: TLS (run Redis on a private network, or behind a local TLS proxy such as
/// stunnel), Redis Cluster or Sentinel (use one primary), or RESP3. The value is stored as JSON;
/// the password appears in no description, mirror or error.
///
/// Every method blocks the calling thread for at most the configuration's deadlines (connecting
/// and each command), also while other threads use the same store; ``lock(timeout:)`` also waits
/// for the lock for at most `timeout`, and, when the answer to taking it is lost, for the release
/// of what the server may have taken: one more command, or two when the server closes the
/// connection before answering the first. Resolving a host name is the exception:
/// the system's resolver has no deadline, so give the server as an IP address (or a name the hosts
/// file resolves) where a slow DNS must not hold a request. A dropped connection is opened again on
/// the next call.
public final class RedisAuthenticationStore<Value: Codable & Sendable>: CoordinatedAuthenticationStore,
    CustomStringConvertible, CustomReflectable
{
    /// The key the value is stored under.
    public let key: String
    /// The key of the refresh lock: `key` followed by `:lock`.
    public var lockKey: String { key + ":lock" }
    /// How long the lock lives if its holder never releases it (a killed process), in seconds.
    public let lockTTL: TimeInterval
    /// Where the server is.
    public var configuration: RedisConfiguration { client.configuration }

    let client: RedisClient

    /// The longest ``lockTTL``, in seconds: a year. As milliseconds it fits any integer the
    /// server takes, so that no value can crash the conversion.
    static var maximumLockTTL: TimeInterval { 365 * 86_400 }

    /// A store of the value under `key` on the server `configuration` describes.
    ///
    /// - Parameters:
    ///   - key: The Redis key of the value; the lock uses `key:lock`.
    ///   - configuration: Where the server is, its password, and the deadlines.
    ///   - lockTTL: Seconds the refresh lock lives at most: the closure's `abandonAfter` (default
    ///     120, as the closure's for any `refreshTimeout` up to 30 s): finite and at least a
    ///     millisecond, else the program stops; one longer than a year is read as a year.
    public init(key: String, configuration: RedisConfiguration = RedisConfiguration(), lockTTL: TimeInterval = 120) {
        requireValidConfiguration(
            lockTTL.isFinite && lockTTL >= 0.001, "RedisAuthenticationStore.lockTTL",
            mustBe: "a finite number of seconds, at least 0.001", given: "\(lockTTL)")
        self.key = key
        self.lockTTL = min(lockTTL, Self.maximumLockTTL)
        self.client = RedisClient(configuration)
    }

    /// `RedisAuthenticationStore(key, server)`, without the password.
    public var description: String { "RedisAuthenticationStore(\(key), \(configuration))" }

    /// What `dump` and debuggers show: the key, the lock's lifetime and the server, without its
    /// password; not the connection, whose buffer may hold a reply (the stored value).
    public var customMirror: Mirror {
        Mirror(
            self, children: ["key": key, "lockTTL": lockTTL, "configuration": configuration], displayStyle: .class)
    }

    /// The stored value, or nil when there is none, it cannot be decoded, or the server cannot be
    /// reached.
    public func load() -> Value? {
        try? read()
    }

    /// The stored value, or nil when there is none or it does not decode as `Value` (a corrupt
    /// value reads as "log in again", and the next save replaces it).
    ///
    /// - Throws: A ``RedisError`` when the server cannot be asked: the closure then fails its
    ///   requests with `RefreshQueueError.authenticationUnreadable` instead of logging the user
    ///   out.
    public func read() throws -> Value? {
        try readRevision().value
    }

    /// Stores `value` as JSON, replacing what was stored.
    ///
    /// - Throws: ``RedisError/codingFailed(_:)`` when `value` does not encode,
    ///   ``RedisError/replyTooLarge(limit:)`` when it would not read back within the configured
    ///   bound (``RedisConfiguration/maximumReplySize``, which counts a few bytes of framing), or the
    ///   error that kept the server from storing it.
    public func save(_ value: Value) throws {
        let reply = try client.run(RESPCommand("SET", [key], value: Array(encoded(value))))
        guard reply == .simpleString("OK") else { throw RedisError.protocolViolation("SET did not answer OK") }
    }

    /// `value` as the JSON that is stored.
    ///
    /// - Throws: ``RedisError/codingFailed(_:)`` when `value` does not encode, and
    ///   ``RedisError/replyTooLarge(limit:)`` when it would not read back.
    func encoded(_ value: Value) throws -> Data {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw RedisError.codingFailed("the value does not encode as JSON")
        }
        // What is saved must read back: the reply to GET frames the value with a few bytes.
        guard RESPParser.bulkString(ofLength: data.count, fits: configuration.maximumReplySize) else {
            throw RedisError.replyTooLarge(limit: RESPParser.bound(configuration.maximumReplySize))
        }
        return data
    }

    /// Deletes the stored value; deleting a missing one succeeds.
    public func remove() throws {
        _ = try client.run(RESPCommand("DEL", [key]))
    }

    /// Takes the refresh lock shared by every user of this key, waiting at most `timeout`
    /// seconds; it expires by itself after ``lockTTL``.
    ///
    /// - Throws: `AuthenticationStoreError.lockTimedOut(after:)` when another holder still has it
    ///   after `timeout`; a ``RedisError`` when the server cannot be asked (a transport failure)
    ///   or refuses (a wrong password, a read-only replica, no memory left).
    public func lock(timeout: TimeInterval) throws -> any AuthenticationStoreLock {
        let owner = RedisStoreLock.newOwner()
        let milliseconds = String(Int64(saturating: (lockTTL * 1000).rounded(.up)))
        // Zero or less (or NaN) tries once; infinity waits as long as the file store's lock does.
        let wait = timeout.isNaN ? 0 : min(max(0, timeout), 1e8)
        let deadline = ProcessInfo.processInfo.systemUptime + wait
        var pause: TimeInterval = 0.005
        while true {
            let reply: RESPValue
            var sent = false
            do {
                reply = try client.run(RESPCommand("SET", [lockKey, owner, "NX", "PX", milliseconds]), sent: &sent)
            } catch {
                // Never sent (no turn on the connection, or no connection in time): nothing to
                // release, and asking would only wait out the same deadlines once more.
                if sent { releaseIfTaken(owner: owner, after: error) }
                throw error
            }
            switch reply {
            case .simpleString("OK"):
                return RedisStoreLock(client: client, key: lockKey, owner: owner)
            case .null:
                let left = deadline - ProcessInfo.processInfo.systemUptime
                guard left > 0 else { throw AuthenticationStoreError.lockTimedOut(after: wait) }
                Thread.sleep(forTimeInterval: min(pause, left))
                pause = min(pause * 2, 0.1)
            default:
                let error = RedisError.protocolViolation("SET NX answered with neither OK nor nil")
                releaseIfTaken(owner: owner, after: error)
                throw error
            }
        }
    }

    /// After a `SET … NX` whose answer was lost (a timeout, a dropped connection, a garbled
    /// reply), the server may have taken the lock for `owner` all the same, and nobody would
    /// release it before `lockTTL`: it is released here if so, before the error is thrown. When
    /// the server cannot be asked either, the lock expires at its TTL.
    private func releaseIfTaken(owner: String, after error: RedisError) {
        // Otherwise refused: nothing was taken.
        guard error.answerMayBeLost else { return }
        RedisStoreLock.release(lockKey, owner: owner, using: client)
    }

    /// The process id in the lock's owner value, if the lock is held: which process holds it.
    func lockHolder() throws -> Int32? {
        guard case .bulkString(let bytes) = try client.run(RESPCommand("GET", [lockKey])) else { return nil }
        return RedisStoreLock.processID(inOwner: String(decoding: bytes, as: UTF8.self))
    }
}
