import Foundation

/// Why a ``LoopbackRedirectReceiver`` returned no authorization code.
public enum LoopbackRedirectError: Error, Sendable, Equatable {
    /// No socket could be bound on the loopback address; `errno` says why.
    case listenFailed(errno: Int32)
    /// The callback path does not start with `/`, or holds a query, a fragment or a space.
    case invalidPath
    /// The browser did not come back within the timeout.
    case timedOut
    /// The receiver already served a login (or is serving one).
    case alreadyUsed
}

extension LoopbackRedirectError: CustomStringConvertible, LocalizedError, TokenFreeError {
    /// Sentences a person can act on.
    public var description: String {
        switch self {
        case .listenFailed(let errno):
            return "No port could be opened on this machine's loopback address for the login's redirect "
                + "(\(ErrnoName.describe(errno))). Check that the loopback interface is up."
        case .invalidPath:
            return "The redirect's callback path must start with / and hold no query, fragment or space."
        case .timedOut:
            return "The login did not come back from the browser in time. Start a new login."
        case .alreadyUsed:
            return "This redirect receiver has already served a login. Make a new one for each login."
        }
    }

    /// The same text as ``description``, so that `localizedDescription` is readable.
    public var errorDescription: String? { description }
}
