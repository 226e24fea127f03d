import Foundation
import RefreshQueue

/// A short name for what a request's error means, for counting.
public enum ErrorKind {
    /// The kinds a request may end with, other than a status (`status200`, …) or `other`.
    public static let failures = [
        "notAuthenticated", "refreshTimedOut", "excessiveRefresh", "unreadable", "server500", "server503",
        "malformed", "transport", "invalidGrant", "oauth2Other", "storeOrFuture", "apiTransport",
    ]

    public static func of(_ error: any Error) -> String {
        switch error {
        case RefreshQueueError.notAuthenticated: return "notAuthenticated"
        case RefreshQueueError.refreshTimedOut: return "refreshTimedOut"
        case RefreshQueueError.excessiveRefresh: return "excessiveRefresh"
        case RefreshQueueError.authenticationUnreadable: return "unreadable"
        case let underlying as OAuth2Error:
            switch underlying {
            case .server(let status, _): return "server\(status)"
            case .malformedResponse: return "malformed"
            case .transport: return "transport"
            case .tokenEndpoint(let answer) where answer.code == .invalidGrant: return "invalidGrant"
            default: return "oauth2Other"
            }
        case is AuthenticationStoreError, is FutureError: return "storeOrFuture"
        case is URLError: return "apiTransport"
        default: return "other"
        }
    }
}
