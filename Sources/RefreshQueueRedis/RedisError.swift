import Foundation

/// Why a ``RedisAuthenticationStore`` could not talk to its Redis server.
///
/// No case carries a password, a stored value or a token: ``description`` is safe to log. The
/// cases a network causes (``connectionFailed(_:)``, ``timedOut(_:)``, ``connectionClosed``), and a
/// ``commandFailed(command:message:)`` of a server that cannot answer yet (`LOADING` after a
/// restart, `BUSY`, `MASTERDOWN`, or every connection it allows taken), are transport failures
/// (`RefreshFailure.isTransportFailure`): a refresh that fails with one is not counted against the
/// closure's refresh window, and requests fail while the server is away instead of logging the
/// user out.
public enum RedisError: Error, Sendable, Equatable {
    /// The server could not be reached: the host did not resolve, the connection was refused, or
    /// a socket call failed. Says which, without any credential.
    case connectionFailed(String)

    /// The server did not answer within the deadline: `operation` names what was waited for
    /// (connecting, or the command's name).
    case timedOut(String)

    /// The server closed the connection before the reply was complete.
    case connectionClosed

    /// The server refused the username and password (`WRONGPASS`), or asks for a password none
    /// was given (`NOAUTH`). Holds the server's error code, never the password.
    case authenticationFailed(String)

    /// The server refused a command: holds the command's name and the server's error line.
    case commandFailed(command: String, message: String)

    /// The server's answer is not RESP2, or not the reply the command expects.
    case protocolViolation(String)

    /// A reply, or a value to store, is larger than the configured bound.
    case replyTooLarge(limit: Int)

    /// The value to store could not be encoded as JSON. (A stored value that does not decode is
    /// read as none: see ``RedisAuthenticationStore/read()``.)
    case codingFailed(String)
}

extension RedisError: CustomStringConvertible, LocalizedError {
    /// A sentence a person can act on; no password, value or token.
    public var description: String {
        switch self {
        case .connectionFailed(let reason): return "Redis could not be reached: \(reason)."
        case .timedOut(let operation): return "Redis did not answer in time (\(operation))."
        case .connectionClosed: return "Redis closed the connection before its reply was complete."
        case .authenticationFailed(let code):
            return "Redis refused the credentials (\(code)): check the username and password."
        case .commandFailed(let command, let message): return "Redis refused \(command): \(message)"
        case .protocolViolation(let reason): return "Redis answered something that is not RESP2: \(reason)."
        case .replyTooLarge(let limit): return "A Redis reply or value is larger than the \(limit)-byte bound."
        case .codingFailed(let reason): return "The stored value could not be read or written: \(reason)."
        }
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

extension RedisError {
    /// Whether a command that failed this way may have run on the server all the same: its answer
    /// timed out, its connection dropped before the answer, or the answer could not be read.
    var answerMayBeLost: Bool {
        switch self {
        case .timedOut, .connectionClosed, .protocolViolation, .replyTooLarge: return true
        default: return false
        }
    }
}
