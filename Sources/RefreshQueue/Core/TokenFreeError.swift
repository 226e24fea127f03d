/// An error whose `description` never contains a token, a secret or a stored value.
///
/// A ``RefreshQueueError`` that wraps an error (``RefreshQueueError/refreshFailed(_:)``,
/// ``RefreshQueueError/authenticationUnreadable(_:)``) shows the text of one that conforms, and of
/// any other only its type and code, since that text might carry a token. The library's own
/// errors conform; conform an error of yours only if no value that reaches its description can be
/// a secret.
///
/// ```swift
/// enum KeychainFailure: TokenFreeError {
///     case locked
///     var description: String { "the keychain is locked" }
/// }
/// ```
public protocol TokenFreeError: Error, CustomStringConvertible {}
