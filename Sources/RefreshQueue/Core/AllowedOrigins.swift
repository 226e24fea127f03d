import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which origins — scheme, host and port — receive the token.
///
/// A request to any other origin passes the closure unsigned: it is not the API the token
/// belongs to, and a token sent there would be a token given away. Whatever the origins, a token
/// never travels unencrypted: a request that would be signed but goes to plain `http://` (other
/// than to this machine: `localhost`, `127.0.0.1`, `::1`) fails with
/// ``RefreshQueueError/insecureRequest(host:)``, unless ``allowingPlainHTTP()`` says otherwise.
///
/// ```swift
/// let authentication = RefreshingRequestClosure(
///     client: client, store: store, origins: .only(URL(string: "https://api.spotify.com")!))
/// ```
public struct AllowedOrigins: Sendable, Equatable {
    /// `nil`: every origin.
    private let origins: Set<Origin>?
    private let plainHTTP: Bool
    /// How URLs of the origins to sign begin, exactly as `absoluteString` spells them most of the
    /// time: a match is decided without parsing the URL (parsing costs more than signing).
    private let signedPrefixes: [[UInt8]]

    private init(origins: Set<Origin>?, plainHTTP: Bool) {
        self.origins = origins
        self.plainHTTP = plainHTTP
        guard let origins else {
            signedPrefixes = [Array("https://".utf8)]
            return
        }
        signedPrefixes = origins.filter { $0.isSecure || plainHTTP }.flatMap(\.prefixes).map { Array($0.utf8) }
    }

    public static func == (lhs: AllowedOrigins, rhs: AllowedOrigins) -> Bool {
        lhs.origins == rhs.origins && lhs.plainHTTP == rhs.plainHTTP
    }

    /// Every origin receives the token (over https, or plain http to this machine). The default,
    /// for apps whose every request goes to their own API; name the API with ``only(_:)`` as soon
    /// as a request may go elsewhere (a CDN, an analytics host, a link from a response).
    public static let all = AllowedOrigins(origins: nil, plainHTTP: false)

    /// Only requests to the origins of `urls` (their scheme, host and port; paths are ignored).
    public static func only(_ urls: URL...) -> AllowedOrigins {
        only(urls)
    }

    /// Only requests to the origins of `urls` (their scheme, host and port; paths are ignored).
    public static func only(_ urls: [URL]) -> AllowedOrigins {
        AllowedOrigins(origins: Set(urls.compactMap(Origin.init)), plainHTTP: false)
    }

    /// The same origins, and plain `http://` to any of them too: the token then travels
    /// unencrypted. For a development server on a private network; never in production.
    public func allowingPlainHTTP() -> AllowedOrigins {
        AllowedOrigins(origins: origins, plainHTTP: true)
    }

    /// What to do with `request`.
    @inline(__always)
    func decision(for request: URLRequest) -> Decision {
        // The URL is read for its text alone, and let go of at once: only a request that no prefix
        // settles reads it again, to parse it.
        if let text = request.url?.absoluteString, Self.starts(text, withOneOf: signedPrefixes) { return .sign }
        return parsedDecision(for: request.url)
    }

    /// The decision from the URL's parsed scheme, host and port.
    private func parsedDecision(for url: URL?) -> Decision {
        guard let origin = Origin(url) else {
            // No origin (a file URL, a relative URL): nothing a token could be sent to.
            return .passUnsigned
        }
        if let origins, !origins.contains(origin) { return .passUnsigned }
        guard origin.isSecure || plainHTTP else { return .refuse(.insecureRequest(host: origin.host)) }
        return .sign
    }

    /// Whether `text` begins with one of `prefixes` (ASCII letters in any case) followed by the end,
    /// `/`, `?` or `#`: the whole authority, not just the start of a longer host name.
    private static func starts(_ text: String, withOneOf prefixes: [[UInt8]]) -> Bool {
        if let found = text.utf8.withContiguousStorageIfAvailable({ matches($0, prefixes) }) { return found }
        return Array(text.utf8).withUnsafeBufferPointer { matches($0, prefixes) }
    }

    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ prefixes: [[UInt8]]) -> Bool {
        prefixes.contains { prefix in
            guard bytes.count >= prefix.count else { return false }
            for index in prefix.indices where lowercased(bytes[index]) != prefix[index] { return false }
            // `https://` (every origin) ends with the slash: any host will do.
            guard prefix.last != UInt8(ascii: "/"), bytes.count > prefix.count else { return true }
            let next = bytes[prefix.count]
            return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    enum Decision: Equatable {
        case sign
        case passUnsigned
        case refuse(RefreshQueueError)

        static func == (lhs: Decision, rhs: Decision) -> Bool {
            switch (lhs, rhs) {
            case (.sign, .sign), (.passUnsigned, .passUnsigned): return true
            case (.refuse(let left), .refuse(let right)): return left.description == right.description
            default: return false
            }
        }
    }
}
