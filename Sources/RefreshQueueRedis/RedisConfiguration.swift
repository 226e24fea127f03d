import Foundation
import RefreshQueue

/// Where a Redis server is and how to talk to it.
///
/// The password never appears in ``description``, in a mirror, or in an error.
public struct RedisConfiguration: Sendable, CustomStringConvertible, CustomReflectable {
    /// The server's host name or address (default `127.0.0.1`).
    public var host: String
    /// The server's port (default 6379), within 1...65535.
    public var port: Int {
        didSet { Self.check(port: port) }
    }
    /// The ACL user name (Redis 6 and later), or `nil` for the default user. A user without a
    /// password (`nopass`) needs no ``password``.
    public var username: String?
    /// The password (`requirepass` or the ACL user's), or `nil` when the server needs none.
    public var password: String?
    /// The logical database (`SELECT`), default 0; never negative.
    public var database: Int {
        didSet { Self.check(database: database) }
    }
    /// Seconds a connection attempt may take before it fails with ``RedisError/timedOut(_:)``.
    /// Resolving ``host`` comes before and has no deadline: give an IP address where a slow DNS
    /// must not hold a request. Finite and above zero; one longer than a year counts as a year.
    public var connectTimeout: TimeInterval {
        didSet { requirePositiveSeconds(connectTimeout, "RedisConfiguration.connectTimeout") }
    }
    /// Seconds a command may wait for its reply before it fails with ``RedisError/timedOut(_:)``.
    /// Finite and above zero; one longer than a year counts as a year.
    public var commandTimeout: TimeInterval {
        didSet { requirePositiveSeconds(commandTimeout, "RedisConfiguration.commandTimeout") }
    }
    /// The largest reply read, in bytes as they come from the server (default 1 MiB; at least
    /// 64). A value is saved only if its reply fits: one a few bytes under the bound is refused
    /// by `save`, with ``RedisError/replyTooLarge(limit:)``, rather than stored unreadable.
    public var maximumReplySize: Int {
        didSet { Self.check(maximumReplySize: maximumReplySize) }
    }

    /// A configuration; every parameter has a default (a server on this machine, port 6379).
    ///
    /// A value outside the range its property gives stops the program, here or when the property
    /// is set later (see the RefreshQueue article on errors, "Invalid configuration").
    public init(
        host: String = "127.0.0.1",
        port: Int = 6379,
        username: String? = nil,
        password: String? = nil,
        database: Int = 0,
        connectTimeout: TimeInterval = 2,
        commandTimeout: TimeInterval = 2,
        maximumReplySize: Int = 1 << 20
    ) {
        Self.check(port: port)
        Self.check(database: database)
        requirePositiveSeconds(connectTimeout, "RedisConfiguration.connectTimeout")
        requirePositiveSeconds(commandTimeout, "RedisConfiguration.commandTimeout")
        Self.check(maximumReplySize: maximumReplySize)
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.maximumReplySize = maximumReplySize
    }

    private static func check(port: Int) {
        requireValidConfiguration(
            (1...65_535).contains(port), "RedisConfiguration.port", mustBe: "within 1...65535", given: "\(port)")
    }

    private static func check(database: Int) {
        requireValidConfiguration(
            database >= 0, "RedisConfiguration.database", mustBe: "0 or more", given: "\(database)")
    }

    private static func check(maximumReplySize: Int) {
        requireValidConfiguration(
            maximumReplySize >= 64, "RedisConfiguration.maximumReplySize", mustBe: "64 or more",
            given: "\(maximumReplySize)")
    }

    /// `redis://[user@]host:port/db`, with the password shown as `***` when there is one.
    public var description: String {
        let user = username.map { "\($0)\(password == nil ? "" : ":***")@" } ?? (password == nil ? "" : ":***@")
        return "redis://\(user)\(host):\(port)/\(database)"
    }

    /// Only ``description``: the password stays out of `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// A deadline `seconds` from now, in monotonic seconds; an unusable value counts as 2 s.
    static func deadline(after seconds: TimeInterval) -> TimeInterval {
        ProcessInfo.processInfo.systemUptime + Self.seconds(seconds)
    }

    /// `seconds` as a deadline uses it: an unusable value (not finite, zero or less) is 2 s, and
    /// anything longer than ``maximumTimeout`` is that. Two of them added up still fit the
    /// nanoseconds a lock's wait is converted to, which overflow after about 292 years.
    static func seconds(_ seconds: TimeInterval) -> TimeInterval {
        seconds.isFinite && seconds > 0 ? min(seconds, maximumTimeout) : 2
    }

    /// The longest deadline, in seconds: a year, long enough to mean "no deadline".
    static var maximumTimeout: TimeInterval { 365 * 86_400 }
}
