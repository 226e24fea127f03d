import RefreshQueue

/// Its ``RedisError/description`` names no password, value or token, so a `RefreshQueueError`
/// wrapping it shows it.
extension RedisError: TokenFreeError {}

extension RedisError: RefreshFailure {
    /// True for ``connectionFailed(_:)``, ``timedOut(_:)`` and ``connectionClosed``, and for a
    /// ``commandFailed(command:message:)`` of a server that cannot answer yet: `LOADING` (it is
    /// reading its data back after a restart), `BUSY` (a script holds it), `MASTERDOWN` (a replica
    /// cut off from its primary), `ERR max number of clients reached` (every connection it allows
    /// is taken). Each is the outage still going on, not a refusal.
    public var isTransportFailure: Bool {
        switch self {
        case .connectionFailed, .timedOut, .connectionClosed: return true
        case .commandFailed(_, let message): return Self.isUnavailable(message)
        default: return false
        }
    }

    /// Whether a server error line says the server cannot answer now, rather than that it refuses.
    static func isUnavailable(_ message: String) -> Bool {
        message.hasPrefix("LOADING ") || message.hasPrefix("BUSY ") || message.hasPrefix("MASTERDOWN ")
            || message.hasPrefix("ERR max number of clients reached")
    }
}
