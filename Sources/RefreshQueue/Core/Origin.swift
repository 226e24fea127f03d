import Foundation

/// Where a URL points, as far as a token is concerned (RFC 6454): scheme, host and port, with the
/// port a scheme implies filled in. Two URLs of one origin may share a token; of two, never.
struct Origin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of `url`; `nil` for a URL without a scheme or host (a file URL, say), or of a
    /// scheme other than http, https, ws and wss (an app's own scheme, even with a port): nothing
    /// a token is sent to over the network.
    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), let defaultPort = Self.defaultPort(of: scheme),
            var host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        // `[::1]` and `::1` are one host.
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? defaultPort
    }

    /// How a URL of this origin begins: `scheme://host`, and with the port spelled out.
    var prefixes: [String] {
        let name = host.contains(":") ? "[\(host)]" : host
        let base = "\(scheme)://\(name)"
        return Self.defaultPort(of: scheme) == port ? [base, "\(base):\(port)"] : ["\(base):\(port)"]
    }

    /// Whether a token sent here is encrypted on the wire, or never leaves the machine.
    var isSecure: Bool {
        isEncrypted || isLoopback
    }

    /// Whether the scheme encrypts what it carries: https or wss.
    var isEncrypted: Bool {
        scheme == "https" || scheme == "wss"
    }

    /// How URLs most often spell this machine: the hosts of ``isLoopback`` whose every port and
    /// path ``AllowedOrigins/all`` signs over plain http.
    static let loopbackHosts = ["localhost", "127.0.0.1", "[::1]"]

    /// `localhost` (and its subdomains), 127.0.0.0/8 and `::1`.
    ///
    /// An address only in its plain dotted-decimal form: `127.0.0.08` is no address to the
    /// resolver (it asks DNS), and `0127.0.0.1` is octal, 87.0.0.1, to some URL parsers. Anything
    /// that merely looks like 127.x.x.x is another machine.
    var isLoopback: Bool {
        Self.isLoopback(host: host)
    }

    /// ``isLoopback`` for `host`, in lower case and without brackets.
    static func isLoopback(host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy(Self.isDecimalOctet)
    }

    /// `0` to `255`, in decimal digits without a leading zero.
    private static func isDecimalOctet(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 3,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            first != UInt8(ascii: "0") || text.utf8.count == 1
        else { return false }
        return UInt8(text) != nil
    }

    private static func defaultPort(of scheme: String) -> Int? {
        switch scheme {
        case "https", "wss": return 443
        case "http", "ws": return 80
        default: return nil
        }
    }
}
