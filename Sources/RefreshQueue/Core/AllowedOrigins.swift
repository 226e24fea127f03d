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
/// So does a request to this machine that the environment sends through a proxy on another (on
/// Linux, URLSession takes `http_proxy` and `all_proxy` for it unless `no_proxy` lists its host).
///
/// ```swift
/// let authentication = RefreshingRequestClosure(
///     client: client, store: store,
///     options: .init(origins: .only(URL(string: "https://api.spotify.com")!)))
/// ```
public struct AllowedOrigins: Sendable, Equatable {
    /// `nil`: every origin.
    private let origins: Set<Origin>?
    private let plainHTTP: Bool
    /// How URLs of the origins to sign begin, exactly as `absoluteString` spells them most of the
    /// time: a match is decided without parsing the URL (parsing costs more than signing).
    private let signedPrefixes: SignedPrefixes

    private init(origins: Set<Origin>?, plainHTTP: Bool) {
        self.origins = origins
        self.plainHTTP = plainHTTP
        guard let origins else {
            signedPrefixes = SignedPrefixes(Self.everyOriginPrefixes(plainHTTP: plainHTTP))
            return
        }
        let signed = origins.filter { $0.isSecure || plainHTTP }
        signedPrefixes = SignedPrefixes(signed.flatMap(\.prefixes).map { ($0, .authority) })
    }

    /// How the URLs that ``all`` signs begin: any host over `https://` and `wss://`, and over plain
    /// `http://` and `ws://` any host when plain http is allowed, otherwise this machine on any
    /// port, spelled as most URLs spell it (`localhost`, `127.0.0.1`, `[::1]`; other spellings are
    /// parsed).
    static func everyOriginPrefixes(plainHTTP: Bool) -> [(String, SignedPrefixes.Ending)] {
        let secure = ["https://", "wss://"].map { ($0, SignedPrefixes.Ending.anyHost) }
        let plain = ["http://", "ws://"]
        guard !plainHTTP else { return secure + plain.map { ($0, .anyHost) } }
        return secure + plain.flatMap { scheme in Origin.loopbackHosts.map { (scheme + $0, .anyPort) } }
    }

    /// Whether both sign the same origins, and both allow plain http or neither does.
    public static func == (lhs: AllowedOrigins, rhs: AllowedOrigins) -> Bool {
        lhs.origins == rhs.origins && lhs.plainHTTP == rhs.plainHTTP
    }

    /// Every origin receives the token (over https, or plain http to this machine). The default,
    /// for apps whose every request goes to their own API; name the API with
    /// ``only(_:)-(URL...)`` as soon as a request may go elsewhere (a CDN, an analytics host, a
    /// link from a response).
    public static let all = AllowedOrigins(origins: nil, plainHTTP: false)

    /// Only requests to the origins of `urls` (their scheme, host and port; paths are ignored).
    public static func only(_ urls: URL...) -> AllowedOrigins {
        only(urls)
    }

    /// Only requests to the origins of `urls` (their scheme, host and port; paths are ignored).
    ///
    /// A URL without a scheme or a host (`URL(string: "api.spotify.com")`) names no origin: it
    /// would match no request, so it stops the program here, named without its user part and
    /// query (see <doc:Errors#Invalid-configuration>).
    public static func only(_ urls: [URL]) -> AllowedOrigins {
        for url in urls {
            requireValidConfiguration(
                Origin(url) != nil, "each URL of AllowedOrigins.only", mustBe: "an origin with a scheme and a host",
                given: shown(url))
        }
        return AllowedOrigins(origins: Set(urls.compactMap(Origin.init)), plainHTTP: false)
    }

    /// A URL as a message may show it: without a user part and without a query, which may hold
    /// credentials.
    private static func shown(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(a URL)" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        // Without a host, `user:password@…` reads as a scheme and a path: nothing is shown then.
        guard let text = components.string, !text.contains("@") else { return "(a URL with an @ and no host)" }
        return text
    }

    /// `scheme://host:port` of `url` when it has an origin that these do not allow; `nil`
    /// otherwise (an allowed origin, or a URL with no origin at all, a file's say).
    func disallowedOrigin(of url: URL?) -> String? {
        guard let origins, let origin = Origin(url), !origins.contains(origin) else { return nil }
        let host = origin.host.contains(":") ? "[\(origin.host)]" : origin.host
        return "\(origin.scheme)://\(host):\(origin.port)"
    }

    /// The same origins, with those of plain `http://` (or `ws://`) signed instead of refused:
    /// the token then travels unencrypted. List the server by its `http://` URL
    /// (`.only(URL(string: "http://dev.local:8080")!).allowingPlainHTTP()`): an `https://`
    /// origin does not cover the same host over http, whose requests pass unsigned. On ``all``,
    /// every plain-http origin is signed. For a development server on a private network; never in
    /// production.
    public func allowingPlainHTTP() -> AllowedOrigins {
        AllowedOrigins(origins: origins, plainHTTP: true)
    }

    /// What to do with `request`, with the proxies that `proxies` names.
    @inline(__always)
    func decision(for request: URLRequest, proxies: ProxyEnvironment = .process) -> Decision {
        // The URL is read for its text alone, and let go of at once: only a request that no prefix
        // settles, or one over plain http while a proxy is set, reads it again, to parse it.
        if let text = request.url?.absoluteString, let match = signedPrefixes.match(text) {
            if match == .secure || plainHTTP { return .sign }
            return proxyDecision(for: request.url, proxies: proxies)
        }
        return parsedDecision(for: request.url, proxies: proxies)
    }

    /// The decision from the URL's parsed scheme, host and port, which ``decision(for:proxies:)``
    /// reaches only for URLs that no prefix settles.
    func parsedDecision(for url: URL?, proxies: ProxyEnvironment = .process) -> Decision {
        guard let origin = Origin(url) else {
            // No origin (a file URL, a relative URL): nothing a token could be sent to.
            return .passUnsigned
        }
        if let origins, !origins.contains(origin) { return .passUnsigned }
        guard origin.isSecure || plainHTTP else { return .refuse(.insecureRequest(host: origin.host)) }
        return plainHTTP ? .sign : proxyDecision(for: origin, proxies: proxies)
    }

    /// A request to this machine over plain http (or ws) is signed only when it goes there
    /// directly, or through a proxy on this machine: a proxy elsewhere would read the token.
    private func proxyDecision(for url: URL?, proxies: ProxyEnvironment) -> Decision {
        // Without a proxy variable set (the usual case), the URL is not parsed.
        guard proxies.mayProxyPlainRequests, let origin = Origin(url) else { return .sign }
        return proxyDecision(for: origin, proxies: proxies)
    }

    private func proxyDecision(for origin: Origin, proxies: ProxyEnvironment) -> Decision {
        guard !origin.isEncrypted, let proxy = proxies.remoteProxy(forPlain: origin.scheme, host: origin.host) else {
            return .sign
        }
        return .refuse(.insecureRequest(host: proxy))
    }
}

/// How the URLs of the origins to sign begin, ready to be compared eight bytes at a time: one
/// comparison for `https://`, three for `https://api.spotify.com`, instead of one per byte.
struct SignedPrefixes: Sendable {
    /// Eight bytes of a prefix at `offset`: bytes match when `(text | caseBits) & significant`
    /// equals `expected`. `caseBits` sets the bit that tells ASCII case apart at the prefix's
    /// letters (so that `H` and `h` both match `h`, and nothing else does); `significant` keeps
    /// only the bytes inside the prefix.
    private struct Word {
        let offset: Int
        let expected: UInt64
        let caseBits: UInt64
        let significant: UInt64
    }

    /// What may follow a prefix.
    enum Ending {
        /// The end, `/`, `?` or `#`: the prefix is the whole authority (`https://api.example.com`).
        case authority
        /// The start of a host: the prefix is a scheme and its slashes (`https://`).
        case anyHost
        /// A port or none, then what follows an authority: the prefix is a scheme and a host
        /// whose every port is signed (`http://localhost`).
        case anyPort
    }

    /// Whether a prefix is of an encrypted scheme.
    enum Match {
        /// `https://` or `wss://`.
        case secure
        /// `http://` or `ws://`: a proxy may stand on the way.
        case plain
    }

    private struct Prefix {
        /// The prefix's length in bytes.
        let count: Int
        let ending: Ending
        let kind: Match
        /// Where its words are in `words`: at 0, 8, 16, … and its last eight bytes (overlapping).
        let words: Range<Int>
    }

    private let prefixes: [Prefix]
    /// The words of every prefix, in one array of plain values: reading them touches no
    /// reference count.
    private let words: [Word]

    /// `prefixes`, in lower case (as ``Origin`` spells its scheme and host), each with what may
    /// follow it.
    init(_ prefixes: [(String, Ending)]) {
        var all: [Prefix] = []
        var words: [Word] = []
        for (text, ending) in prefixes {
            let bytes = text.utf8.map(\.asciiLowercased)
            let length = max(bytes.count, 8)
            let padding = [UInt8](repeating: 0, count: length - bytes.count)
            let caseBits = bytes.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? UInt8(0x20) : 0 }
            let significant = [UInt8](repeating: 0xFF, count: bytes.count)
            let first = words.count
            for offset in Array(stride(from: 0, to: length - 8, by: 8)) + [length - 8] {
                words.append(
                    Word(
                        offset: offset, expected: Self.word(bytes + padding, at: offset),
                        caseBits: Self.word(caseBits + padding, at: offset),
                        significant: Self.word(significant + padding, at: offset)))
            }
            let secure = text.lowercased().hasPrefix("https://") || text.lowercased().hasPrefix("wss://")
            all.append(
                Prefix(count: bytes.count, ending: ending, kind: secure ? .secure : .plain, words: first..<words.count))
        }
        self.prefixes = all
        self.words = words
    }

    /// The kind of the prefix that `text` begins with (ASCII letters in any case), followed by what
    /// its ``Ending`` allows: the end of the authority, the start of a host, or a port and then the
    /// end of the authority; `nil` when it begins with none.
    func match(_ text: String) -> Match? {
        let prefixes = self.prefixes
        let words = self.words
        if let found = text.utf8.withContiguousStorageIfAvailable({ Self.match($0, prefixes, words) }) { return found }
        return Array(text.utf8).withUnsafeBufferPointer { Self.match($0, prefixes, words) }
    }

    private static func match(_ bytes: UnsafeBufferPointer<UInt8>, _ prefixes: [Prefix], _ words: [Word]) -> Match? {
        // Eight bytes at least, so that every word can be read (a prefix is padded to eight bytes
        // with zeros it does not compare): shorter texts are copied, padded too.
        if bytes.count >= 8, let base = bytes.baseAddress {
            return match(UnsafeRawPointer(base), bytes.count, prefixes, words)
        }
        var padded: UInt64 = 0
        return withUnsafeMutableBytes(of: &padded) { padding in
            padding.copyMemory(from: UnsafeRawBufferPointer(bytes))
            guard let base = padding.baseAddress else { return nil }
            return match(UnsafeRawPointer(base), bytes.count, prefixes, words)
        }
    }

    /// The kind of the first of `prefixes` that the `count` bytes at `base`, readable at least
    /// eight bytes far, begin with.
    @inline(__always)
    private static func match(_ base: UnsafeRawPointer, _ count: Int, _ prefixes: [Prefix], _ words: [Word]) -> Match? {
        prefixes.first { prefix in
            guard count >= prefix.count else { return false }
            for index in prefix.words {
                let word = words[index]
                let loaded = base.loadUnaligned(fromByteOffset: word.offset, as: UInt64.self)
                guard (loaded | word.caseBits) & word.significant == word.expected else { return false }
            }
            switch prefix.ending {
            case .anyHost:
                // Any host will do, but there must be one: `https:///x`, `https://:443` and
                // `https://@/` are left to the parsed check, which signs no URL without a host.
                guard count > prefix.count else { return false }
                let next = base.load(fromByteOffset: prefix.count, as: UInt8.self)
                return next != UInt8(ascii: "/") && next != UInt8(ascii: ":") && next != UInt8(ascii: "@")
                    && next != UInt8(ascii: "?") && next != UInt8(ascii: "#")
            case .authority:
                return endsAuthority(base, count, at: prefix.count)
            case .anyPort:
                guard let end = afterPort(base, count, at: prefix.count) else { return false }
                return endsAuthority(base, count, at: end)
            }
        }?.kind
    }

    /// Whether the authority ends at `offset` of the `count` bytes at `base`: the text ends there,
    /// or goes on with `/`, `?` or `#`.
    @inline(__always)
    private static func endsAuthority(_ base: UnsafeRawPointer, _ count: Int, at offset: Int) -> Bool {
        guard count > offset else { return true }
        let next = base.load(fromByteOffset: offset, as: UInt8.self)
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
    }

    /// Where the bytes at `offset` of the `count` bytes at `base` no longer spell a port: past `:`
    /// and one to five digits of a number up to 65535, or `offset` itself when no `:` is there.
    /// `nil` for anything else (`:` without digits, `:99999`), which is left to the parsed check.
    @inline(__always)
    private static func afterPort(_ base: UnsafeRawPointer, _ count: Int, at offset: Int) -> Int? {
        guard count > offset, base.load(fromByteOffset: offset, as: UInt8.self) == UInt8(ascii: ":") else {
            return offset
        }
        var index = offset + 1
        var port = 0
        while index < count, index - offset <= 5 {
            let digit = base.load(fromByteOffset: index, as: UInt8.self) &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            port = port * 10 + Int(digit)
            index += 1
        }
        return index > offset + 1 && port <= 65535 ? index : nil
    }

    /// The eight bytes of `bytes` at `offset`, in memory order, as `loadUnaligned` reads them.
    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<offset + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}

extension AllowedOrigins {
    enum Decision: Equatable {
        case sign
        case passUnsigned
        case refuse(RefreshQueueError)
    }
}
