import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The persisted authentication: one JSON file, readable by its owner only (mode 0600),
/// replaced atomically so that a reader never sees half a file.
struct TokenFile: Sendable {
    let url: URL

    func load() -> SpotifyAuthentication? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder.tokenFile.decode(SpotifyAuthentication.self, from: data)
    }

    func save(_ authentication: SpotifyAuthentication) throws {
        let data = try JSONEncoder.tokenFile.encode(authentication)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        // Created with mode 0600 from the start: the token is never readable by others.
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// The file's permission bits, for the walkthrough to show.
    var permissions: Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions]) as? Int
    }
}

extension JSONEncoder {
    static var tokenFile: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }
}

extension JSONDecoder {
    static var tokenFile: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}
