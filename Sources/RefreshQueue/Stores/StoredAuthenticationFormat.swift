import Foundation

/// The JSON that ``FileAuthenticationStore`` writes: `{"formatVersion": 1, "value": …}`.
///
/// The value is encoded with `JSONEncoder`, dates as seconds since 1970 (a number, so fractional
/// seconds survive), keys sorted so that equal values give equal files. The format version lets
/// a future version of the library change the layout: a file whose version is newer than
/// ``currentVersion`` is neither read nor overwritten.
enum StoredAuthenticationFormat {
    /// The version this library writes, and the newest it reads.
    static let currentVersion = 1

    /// What a file's contents turned out to be.
    enum Decoded<Value> {
        case value(Value)
        /// Not JSON, not an object with an integer `formatVersion` of at least 1, or a value that
        /// does not decode.
        case corrupt
        /// Written in a newer format version.
        case futureVersion(Int)
    }

    /// The file contents for `value`.
    ///
    /// - Throws: Whatever `JSONEncoder` throws. That error may quote the value: callers must not
    ///   pass it on.
    static func encode<Value: Codable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(Envelope(formatVersion: currentVersion, value: value))
    }

    static func decode<Value: Codable>(_ type: Value.Type, from data: Data) -> Decoded<Value> {
        guard let version = formatVersion(of: data) else { return .corrupt }
        guard version <= currentVersion else { return .futureVersion(version) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let envelope = try? decoder.decode(Envelope<Value>.self, from: data) else { return .corrupt }
        return .value(envelope.value)
    }

    /// The file's format version, or nil when the contents are not a stored authentication at all.
    static func formatVersion(of data: Data) -> Int? {
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.formatVersion >= 1 else {
            return nil
        }
        return header.formatVersion
    }

    private struct Envelope<Value: Codable>: Codable {
        let formatVersion: Int
        let value: Value
    }

    private struct Header: Decodable {
        let formatVersion: Int
    }
}
