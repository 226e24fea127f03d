import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An authentication held by a ``RefreshingRequestClosure``, with the header that signs requests
/// computed once, when it was found, refreshed or adopted.
///
/// The state machine treats it as an opaque value. The driver reads everything that is user code
/// (the token, whether it is stale) outside the lock and hands the machine only the answers.
final class HeldCredential: Sendable {
    /// The app's authentication.
    let authentication: any RefreshableAuthentication
    /// The header value that signs requests, or why the token cannot be a header value.
    let header: Result<String, RefreshQueueError>
    /// The header value of `header`, `nil` when the token cannot be one: what the fast path reads,
    /// a plain string with no enum to copy and destroy around it on every request.
    let signingHeader: String?

    init(authentication: any RefreshableAuthentication, header: Result<String, RefreshQueueError>) {
        self.authentication = authentication
        self.header = header
        self.signingHeader = try? header.get()
    }

    /// Writes the header into `request`, when the token can be a header value. The header is read
    /// in place, not copied out of the credential first.
    @inline(__always)
    func sign(_ request: inout URLRequest, scheme: AuthorizationScheme) {
        guard let signingHeader else { return }
        scheme.sign(&request, with: signingHeader)
    }

    /// How stale the authentication is now. User code: never call it under a lock.
    var freshness: Freshness {
        if isRefreshNeeded { return .needed }
        return isRefreshRecommended ? .recommended : .fresh
    }

    /// The authentication's `isRefreshNeeded`, asked in place: copying the existential out of
    /// the credential first costs more than the question on the fast path. User code.
    var isRefreshNeeded: Bool { authentication.isRefreshNeeded }

    /// The authentication's `isRefreshRecommended`, asked in place. User code.
    var isRefreshRecommended: Bool { authentication.isRefreshRecommended }
}

/// How stale the held authentication is, as read outside the lock.
enum Freshness: Sendable, Equatable {
    /// Sign with it.
    case fresh
    /// Sign with it, and refresh in the background.
    case recommended
    /// Requests must wait for a refresh.
    case needed
}
