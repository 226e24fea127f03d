import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLAuthenticationChallenge {
    /// Whether the server asks for HTTP authentication (a 401 with `WWW-Authenticate: Basic`,
    /// Digest, NTLM or Negotiate), rather than, say, for trust in its certificate. URLSession on
    /// Linux answers such a challenge, when no credential is stored for it, by waiting forever.
    var isHTTPAuthentication: Bool {
        [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
            NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
        ].contains(protectionSpace.authenticationMethod)
    }
}
