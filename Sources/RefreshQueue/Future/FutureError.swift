import Foundation

/// Why a future failed on its own, without its work failing.
public enum FutureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Time ran out: the error of a future returned by ``Future/timeout(after:on:error:)`` when
    /// no other error was given.
    case timedOut

    /// The future was abandoned: the work that would have completed it was released first, so
    /// it can never complete.
    ///
    /// A future fails with it when every copy of the `complete` function given to its body is
    /// released uncalled, and when the future itself is released while still pending; its
    /// observers and later stages then see this error, once, on the thread that released it
    /// (just after the callback that released it returns, when a future's callback did).
    case abandoned

    /// A sentence for people.
    public var description: String {
        switch self {
        case .timedOut: return "The operation did not complete in time."
        case .abandoned: return "The operation was abandoned before it completed."
        }
    }
}

/// Its text names no token: a ``RefreshQueueError/refreshFailed(_:)`` that wraps it (in an
/// event) shows it.
extension FutureError: TokenFreeError {}

extension FutureError: LocalizedError {
    /// The same text as ``description``, so that `localizedDescription` is readable.
    public var errorDescription: String? { description }
}
