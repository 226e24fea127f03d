import Foundation

/// Removes from a server's text every form in which the client may have sent a secret: as it is,
/// form- or percent-encoded, and base64-encoded (the `Authorization: Basic` credential), in case
/// the server echoes what it received into an error.
struct SecretRedaction: Sendable {
    /// What replaces a secret.
    static let replacement = "[redacted]"

    /// Every form to remove, longest first, so that a longer form is never left half-replaced.
    private let forms: [String]

    /// - Parameter secrets: The values the client sent (a refresh token, a code, a verifier, the
    ///   client secret, the Basic credential). Values shorter than 4 characters are left alone:
    ///   removing them would mangle ordinary text without protecting anything.
    init(secrets: [String]) {
        var forms = Set<String>()
        for secret in secrets where secret.count >= 4 {
            forms.insert(secret)
            forms.insert(FormURLEncoding.escape(secret))
            if let percent = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
                forms.insert(percent)
            }
            let base64 = Data(secret.utf8).base64EncodedString()
            forms.insert(base64)
            forms.insert(Self.base64URL(base64))
        }
        self.forms = forms.filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    /// `text` with every form of every secret replaced.
    func redact(_ text: String) -> String {
        forms.reduce(text) { $0.replacingOccurrences(of: $1, with: Self.replacement) }
    }

    /// The URL-safe alphabet of RFC 4648 §5, without padding.
    private static func base64URL(_ base64: String) -> String {
        String(
            base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").prefix {
                $0 != "="
            })
    }
}
