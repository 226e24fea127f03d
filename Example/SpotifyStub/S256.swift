import Foundation

/// PKCE's S256 transform (RFC 7636 §4.2): `BASE64URL(SHA-256(verifier))`, unpadded.
///
/// The stub has its own SHA-256 rather than the library's: it checks the library, so a mistake in
/// one must not be able to hide the same mistake in the other. Written from FIPS 180-4 §6.2,
/// message-schedule words computed as they are needed.
enum S256 {
    /// The code challenge for `verifier`.
    static func challenge(for verifier: String) -> String {
        Data(digest(Array(verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// SHA-256 of `message`.
    static func digest(_ message: [UInt8]) -> [UInt8] {
        var padded = message + [0x80] + [UInt8](repeating: 0, count: (119 - message.count % 64) % 64)
        let bits = UInt64(message.count) * 8
        padded += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (UInt64($0) * 8)) }
        var hash: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        for block in stride(from: 0, to: padded.count, by: 64) {
            var words = (0..<16).map { word in
                (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(padded[block + word * 4 + $1]) }
            }
            var v = hash
            for round in 0..<64 {
                if round >= 16 {
                    let w15 = words[round - 15]
                    let w2 = words[round - 2]
                    let sigma0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
                    let sigma1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
                    words.append(words[round - 16] &+ sigma0 &+ words[round - 7] &+ sigma1)
                }
                let big1 = v[4].rotatedRight(6) ^ v[4].rotatedRight(11) ^ v[4].rotatedRight(25)
                let t1 = v[7] &+ big1 &+ ((v[4] & v[5]) ^ (~v[4] & v[6])) &+ k[round] &+ words[round]
                let big0 = v[0].rotatedRight(2) ^ v[0].rotatedRight(13) ^ v[0].rotatedRight(22)
                let t2 = big0 &+ ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]))
                v = [t1 &+ t2, v[0], v[1], v[2], v[3] &+ t1, v[4], v[5], v[6]]
            }
            hash = zip(hash, v).map { $0 &+ $1 }
        }
        return hash.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) } }
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98,
        0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1,
        0xefbe_4786,
        0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da, 0x983e_5152, 0xa831_c66d,
        0xb003_27c8,
        0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc,
        0x5338_0d13,
        0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3,
        0xd192_e819,
        0xd699_0624, 0xf40e_3585, 0x106a_a070, 0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3,
        0x4ed8_aa4a,
        0x5b9c_ca4f, 0x682e_6ff3, 0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb,
        0xbef9_a3f7,
        0xc671_78f2,
    ]
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
