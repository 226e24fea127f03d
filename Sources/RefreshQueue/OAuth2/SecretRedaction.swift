import Foundation

/// Removes from a server's text every form in which the client may have sent a secret: as it is,
/// form- or percent-encoded (any byte escaped or not, hex digits in either case, a space as `+`),
/// and base64-encoded (the `Authorization: Basic` credential), in case the server echoes what it
/// received into an error.
struct SecretRedaction: Sendable {
    /// What replaces a secret.
    static let replacement = "[redacted]"

    /// The bytes of every form to remove, longest first, so that a longer form is never left
    /// half-replaced.
    private let forms: [[UInt8]]

    /// - Parameter secrets: The values the client sent (a refresh token, a code, a verifier, the
    ///   client secret, the Basic credential). Values shorter than 4 characters are left alone:
    ///   removing them would mangle ordinary text without protecting anything.
    init(secrets: [String]) {
        var forms = Set<String>()
        for secret in secrets where secret.count >= 4 {
            forms.insert(secret)
            let base64 = Data(secret.utf8).base64EncodedString()
            forms.insert(base64)
            forms.insert(Self.base64URL(base64))
        }
        self.forms = forms.filter { $0.count >= 4 }.map { Array($0.utf8) }.sorted { $0.count > $1.count }
    }

    /// `text` with every form of every secret replaced.
    func redact(_ text: String) -> String {
        guard !forms.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var kept = [UInt8]()
        kept.reserveCapacity(bytes.count)
        var index = 0
        scanning: while index < bytes.count {
            for form in forms {
                if let end = Self.end(of: form, in: bytes, at: index) {
                    kept += Self.replacement.utf8
                    index = end
                    continue scanning
                }
            }
            kept.append(bytes[index])
            index += 1
        }
        // A form is whole scalars, and an escape is ASCII: what is kept is still UTF-8.
        return String(decoding: kept, as: UTF8.self)
    }

    /// Where `form` ends when it is spelled in `bytes` from `start`, each of its bytes as it is,
    /// as `%XX` (either case), or, for a space, as `+`; `nil` when it is not there.
    private static func end(of form: [UInt8], in bytes: [UInt8], at start: Int) -> Int? {
        var index = start
        for byte in form {
            guard index < bytes.count else { return nil }
            if bytes[index] == byte || (byte == UInt8(ascii: " ") && bytes[index] == UInt8(ascii: "+")) {
                index += 1
            } else if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]), high << 4 | low == byte
            {
                index += 3
            } else {
                return nil
            }
        }
        return index
    }

    /// The value of one hex digit, in either case.
    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The URL-safe alphabet of RFC 4648 §5, without padding.
    private static func base64URL(_ base64: String) -> String {
        String(
            base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").prefix {
                $0 != "="
            })
    }
}
