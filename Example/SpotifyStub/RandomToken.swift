/// Unguessable opaque strings for codes and tokens.
///
/// Values are base64url without padding, so they survive query strings, form bodies and JSON
/// unescaped. The short prefixes mimic the shape of Spotify's tokens and make a misplaced value
/// recognisable in a debugger without revealing anything.
enum RandomToken {
    /// A new authorization code.
    static func authorizationCode() -> String {
        "AQC" + randomString(byteCount: 24)
    }

    /// A new access token.
    static func accessToken() -> String {
        "BQ" + randomString(byteCount: 32)
    }

    /// A new refresh token.
    static func refreshToken() -> String {
        "AQ" + randomString(byteCount: 32)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func randomString(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for _ in 0..<byteCount {
            bytes.append(UInt8.random(in: 0...255, using: &generator))
        }
        // Base64url: every 6 bits pick one character; the tail is padded with zero bits.
        var output: [UInt8] = []
        output.reserveCapacity((byteCount * 4 + 2) / 3)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
