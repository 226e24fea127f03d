import RefreshQueue

extension RedisError: RefreshFailure {
    /// True for ``connectionFailed(_:)``, ``timedOut(_:)`` and ``connectionClosed``.
    public var isTransportFailure: Bool {
        switch self {
        case .connectionFailed, .timedOut, .connectionClosed: return true
        default: return false
        }
    }
}
