import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the token endpoint's HTTP authentication challenges get: a 401 with
/// `WWW-Authenticate: Basic` for a wrong client secret, or a proxy asking for its credentials
/// (407).
enum HTTPChallengeHandling: Sendable, Equatable {
    /// Cancelled, keeping the 401 (as much of its body as had come) as the answer.
    /// swift-corelibs-foundation (Linux) otherwise suspends the task forever when it has no
    /// credential for the challenge, whatever the request's timeout.
    case refuse
    /// The system's own handling: Apple's URLSession answers with the 401 and its whole body when
    /// it has no credential, and uses the credentials the system keeps (an authenticating proxy's).
    case systemDefault

    /// Where the default handling hangs (Linux), `refuse`; elsewhere `systemDefault`.
    static var platform: HTTPChallengeHandling {
        #if canImport(FoundationNetworking)
        return .refuse
        #else
        return .systemDefault
        #endif
    }

    /// How to answer `challenge`, or `nil` when it is no HTTP authentication challenge (a
    /// server-trust challenge, say: the app's session delegate decides those).
    func disposition(for challenge: URLAuthenticationChallenge) -> URLSession.AuthChallengeDisposition? {
        guard challenge.isHTTPAuthentication else { return nil }
        switch self {
        case .refuse: return .cancelAuthenticationChallenge
        case .systemDefault: return .performDefaultHandling
        }
    }
}
