import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What `dump`, `Mirror` and debuggers show of the types that hold a token: their settings and
// state, never the token. Without these, `dump(closure)` walks into the held authentication and
// prints the header it signs with.

extension RefreshingRequestClosure: CustomReflectable {
    /// The closure's settings, and whether it holds an authentication; never the token.
    public var customMirror: Mirror {
        let (holds, waiting) = state.withLock { ($0.machine.heldCredential != nil, $0.machine.waitingCount) }
        return Mirror(
            self,
            children: [
                "refreshTimeout": options.refreshTimeout,
                "abandonAfter": abandonAfter,
                "headerName": scheme.headerName,
                "origins": origins,
                "holdsAuthentication": holds,
                "waiting": waiting,
            ],
            displayStyle: .class)
    }
}

extension AuthorizationTask: CustomReflectable {
    /// The task's place in arrival order and whether it completed; not its request, which may
    /// carry a token (a request the server rejected, handed back to be signed again).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["ticket": ticket, "isCompleted": isCompleted, "isCancelled": isCancelled],
            displayStyle: .struct)
    }
}

extension HeldCredential: CustomReflectable {
    /// Whether the token can be a header value; not the authentication or the header.
    var customMirror: Mirror {
        Mirror(self, children: ["signsRequests": signingHeader != nil], displayStyle: .class)
    }
}

extension RefreshQueueError: CustomReflectable {
    /// What `dump` and debuggers show: the case, and of a wrapped error only what ``description``
    /// shows of it (its type and code, or its text when it is a ``TokenFreeError``). An app's own
    /// error may quote a token (the refresh token it sent, say); it stays in the case for code to
    /// inspect, but `dump(error)` and a `RefreshEvent` that carries it never print it.
    public var customMirror: Mirror {
        let children: KeyValuePairs<String, Any>
        switch self {
        case .refreshFailed(let underlying):
            children = ["refreshFailed": Self.summary(of: underlying)]
        case .authenticationUnreadable(let underlying):
            children = ["authenticationUnreadable": Self.summary(of: underlying)]
        case .invalidConfiguration(let reason):
            children = ["invalidConfiguration": reason]
        case .insecureRequest(let host):
            children = ["insecureRequest": host]
        case .notAuthenticated, .refreshTimedOut, .invalidToken, .excessiveRefresh, .cancelled:
            children = [:]
        }
        return Mirror(self, children: children, displayStyle: .enum)
    }
}
