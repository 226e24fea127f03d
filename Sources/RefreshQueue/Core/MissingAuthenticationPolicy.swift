/// What a ``RefreshingRequestClosure`` does with a request when no authentication is found.
public enum MissingAuthenticationPolicy: Sendable, Equatable {
    /// Fail the request with ``RefreshQueueError/notAuthenticated`` (the default).
    case fail

    /// Send the request unsigned, as RxMoyaAuthenticatable did. For APIs whose endpoints also
    /// work, with less, for anonymous users.
    case sendUnsigned
}
