import Foundation

/// The proxies that libcurl, which carries URLSession's requests on Linux, takes from the
/// environment, as far as a token is concerned: whether a plain-http request to this machine
/// would pass through another machine, which could read it.
///
/// libcurl sends even `http://127.0.0.1` through the proxy that `http_proxy` or `all_proxy`
/// names, unless `no_proxy` lists the host. The environment is read at every request, as libcurl
/// reads it at every transfer. Apple systems take their proxies from the system's settings, not
/// from these variables: there nothing is read.
struct ProxyEnvironment: Sendable {
    /// The value of an environment variable; `nil` when it is unset or empty, as libcurl takes it.
    private let variable: @Sendable (String) -> String?

    /// An environment whose variables `variable` reads.
    init(_ variable: @escaping @Sendable (String) -> String?) {
        self.variable = variable
    }

    /// This process's environment on Linux (and wherever URLSession runs on libcurl); nothing
    /// elsewhere.
    static let process = ProxyEnvironment(processVariable)

    /// The value of this process's environment variable `name` where URLSession reads proxies
    /// from the environment, as libcurl does: `nil` when unset or empty, and always elsewhere.
    static func processVariable(_ name: String) -> String? {
        #if canImport(FoundationNetworking)
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
        #else
        return nil
        #endif
    }

    /// Whether any variable that can name a proxy for plain http or ws is set. When none is (the
    /// usual case), no request is sent through a proxy, whatever its host.
    var mayProxyPlainRequests: Bool {
        Self.proxyVariables(forPlain: "ws").contains { variable($0) != nil }
    }

    /// The host of the proxy on another machine that a plain `scheme` (`http` or `ws`) request to
    /// `host`, this machine, would go through; `nil` when it would go to `host` directly, or
    /// through a proxy on this machine. When a proxy variable names no host that can be read, its
    /// name stands for the host: its value, which may hold a password, is never repeated.
    func remoteProxy(forPlain scheme: String, host: String) -> String? {
        if exempts(host) { return nil }
        let named = Self.proxyVariables(forPlain: scheme).compactMap { name in variable(name).map { (name, $0) } }
        // For http libcurl takes the first one set; for ws its versions differ, so every one counts.
        for (name, value) in scheme == "http" ? Array(named.prefix(1)) : named {
            guard let proxyHost = Self.host(ofProxy: value) else { return name }
            if !Origin.isLoopback(host: proxyHost) { return proxyHost }
        }
        return nil
    }

    /// Whether `no_proxy` (or, when it is unset, `NO_PROXY`) keeps `host` from every proxy, as
    /// every libcurl version reads it: `*`, the host itself (ASCII letters in any case, byte for
    /// byte otherwise, as libcurl compares), or for a name a domain it belongs to (`localhost` or
    /// `.localhost` for `api.localhost`). An address counts only when listed as itself: ranges
    /// (`127.0.0.0/8`) are understood by recent versions only.
    func exempts(_ host: String) -> Bool {
        guard let list = variable("no_proxy") ?? variable("NO_PROXY") else { return false }
        if list.utf8.elementsEqual("*".utf8) { return true }
        let host = host.utf8.map(\.asciiLowercased)
        let dot = UInt8(ascii: ".")
        let isAddress = host.contains(UInt8(ascii: ":")) || host.allSatisfy { $0 == dot || (48...57).contains($0) }
        return list.utf8.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") }).contains {
            let entry = $0.map(\.asciiLowercased)
            if entry == host { return true }
            guard !isAddress else { return false }
            let domain = entry.first == dot ? entry.dropFirst() : entry[...]
            guard !domain.isEmpty, host.count > domain.count else { return false }
            return host[host.count - domain.count - 1] == dot && host.suffix(domain.count).elementsEqual(domain)
        }
    }

    /// The variables that may name the proxy of a plain `scheme` request, in the order libcurl
    /// reads them. For http only the lower-case `http_proxy`: libcurl ignores `HTTP_PROXY`, which
    /// a web server may set from a request's `Proxy` header. For ws, `ws_proxy` in either case and
    /// `http_proxy` as well.
    static func proxyVariables(forPlain scheme: String) -> [String] {
        scheme == "ws" ? wsVariables : httpVariables
    }

    /// Built once: every plain-http request to this machine reads them.
    private static let httpVariables = ["http_proxy", "all_proxy", "ALL_PROXY"]
    private static let wsVariables = ["ws_proxy", "WS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"]

    /// The host that a proxy variable names (`http://user:secret@proxy.example:3128`,
    /// `proxy.example:3128`, `socks5h://[::1]:1080`), in lower case and without brackets; `nil`
    /// when it cannot be read for certain, as libcurl reads it: a scheme only at the start, the
    /// address ending at the first `/`, `?` or `#`, and after the host nothing but a port.
    static func host(ofProxy value: String) -> String? {
        var rest = Substring(value)
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound]
            let schemeCharacters = scheme.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+.-".unicodeScalars.contains($0))
            }
            if !scheme.isEmpty, schemeCharacters { rest = rest[separator.upperBound...] }
        }
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        let host: Substring
        let after: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            after = rest[rest.index(after: close)...]
        } else {
            host = rest.prefix { $0 != ":" }
            after = rest[host.endIndex...]
        }
        let port = after.dropFirst()
        let onlyAPort = after.isEmpty || (after.first == ":" && port.allSatisfy { $0.isASCII && $0.isNumber })
        return host.isEmpty || !onlyAPort ? nil : String(decoding: host.utf8.map(\.asciiLowercased), as: UTF8.self)
    }
}
