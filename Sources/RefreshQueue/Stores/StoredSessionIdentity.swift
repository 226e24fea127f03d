/// An authentication that knows more than its access token about which stored session it is.
///
/// A store-backed closure tells the stored authentication from the one it holds by their access
/// tokens. A server that rotates refresh tokens may hand back the same access token with a new
/// refresh token; told apart by access token alone, the stored authentication another process
/// just refreshed would look like this process's own, and its spent refresh token would be sent
/// again. Authentications that carry a refresh token conform, and name it in their identity.
protocol StoredSessionIdentity {
    /// Equal for two authentications exactly when they are the same stored session: the same
    /// access token and the same refresh token. Holds secrets: never printed, never logged.
    var storedSessionIdentity: String { get }
}

extension RefreshableAuthentication {
    /// ``StoredSessionIdentity/storedSessionIdentity`` where the type has one, else the access
    /// token. User code: never read it under a lock.
    var sessionIdentity: String {
        (self as? any StoredSessionIdentity)?.storedSessionIdentity ?? accessToken
    }
}
