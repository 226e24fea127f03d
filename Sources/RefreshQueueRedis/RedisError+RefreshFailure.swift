import RefreshQueue

/// Its ``RedisError/description`` names no password, value or token, so a `RefreshQueueError`
/// wrapping it shows it.
extension RedisError: TokenFreeError {}

extension RedisError: RefreshFailure {
    /// True for ``connectionFailed(_:)``, ``timedOut(_:)`` and ``connectionClosed``.
    public var isTransportFailure: Bool {
        switch self {
        case .connectionFailed, .timedOut, .connectionClosed: return true
        default: return false
        }
    }
}
