import Foundation

/// `application/x-www-form-urlencoded`, as used by OAuth query strings and token request bodies.
///
/// Decoding follows the WHATWG form rules the OAuth RFC refers to: pairs split on `&`, `+` means
/// a space, and `%XX` escapes are bytes of UTF-8. Invalid escapes or non-UTF-8 results make the
/// whole input invalid, because a half-decoded parameter is worse than a clear `invalid_request`.
enum FormURLEncoding {
    /// Decodes `name=value&...` into pairs in order, keeping duplicates so callers can reject
    /// them (RFC 6749 §3.1: parameters must not be included more than once).
    static func decode(_ encoded: String) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for piece in encoded.split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = piece.firstIndex(of: "=") {
                name = piece[..<equals]
                value = piece[piece.index(after: equals)...]
            } else {
                name = piece
                value = ""
            }
            guard let decodedName = decodeComponent(name), let decodedValue = decodeComponent(value) else {
                return nil
            }
            pairs.append((name: decodedName, value: decodedValue))
        }
        return pairs
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters, so the result is safe as a
    /// query value in any URI scheme, including custom redirect schemes.
    static func encodeComponent(_ value: String) -> String {
        var output = ""
        let hex = Array("0123456789ABCDEF")
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.unicodeScalars.append(UnicodeScalar(byte))
            default:
                output.append("%")
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }

    /// One name or value decoded: `+` as a space, `%XX` as a byte; `nil` for an invalid escape or
    /// bytes that are not UTF-8.
    static func decodeComponent(_ component: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            default:
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
