import Foundation
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The prefixes that sign a request without parsing its URL decide as parsing would: they only
/// spare the work, for `https://` and for this machine over plain http on any port.
@Suite("Signed prefixes")
struct SignedPrefixesTests {
    private static let configurations: [(String, AllowedOrigins)] = [
        ("all", .all),
        ("all, plain http", .all.allowingPlainHTTP()),
        ("only https", .only(URL(string: "https://api.example.test")!)),
        ("only localhost", .only(URL(string: "http://localhost:8080")!)),
        ("only 127.0.0.1, plain http", .only(URL(string: "http://127.0.0.1:8080")!).allowingPlainHTTP()),
        ("only a plain-http host", .only(URL(string: "http://dev.example.test:8080")!)),
    ]

    /// Every URL put together from these parts that `URL(string:)` accepts.
    private static var urls: [URL] {
        let schemes = ["http", "HTTP", "https", "HTTPS", "ws", "wss", "ftp", "app"]
        let hosts = [
            "localhost", "LocalHost", "127.0.0.1", "127.0.0.2", "[::1]", "localhost.evil.test",
            "127.0.0.1.evil.test", "api.example.test", "API.example.TEST", "dev.example.test", "user@localhost",
            "localhost@evil.test", "localhostx", "", "127.0.0.10",
        ]
        let ports = ["", ":", ":0", ":80", ":443", ":8080", ":65535", ":65536", ":99999", ":123456", ":80:81", ":8o"]
        let tails = ["", "/", "/v1/me", "?q=1", "#part", "x", "@evil.test/", ".evil.test", "/@evil.test"]
        return schemes.flatMap { scheme in
            hosts.flatMap { host in
                ports.flatMap { port in tails.compactMap { URL(string: "\(scheme)://\(host)\(port)\($0)") } }
            }
        }
    }

    @Test func everyURLIsDecidedAsParsingItWould() {
        let urls = Self.urls
        #expect(urls.count > 5_000)
        // And while a proxy on another machine would carry plain http (on Linux, `http_proxy`).
        let environments = [ProxyEnvironment { _ in nil }, ProxyEnvironment { $0 == "all_proxy" ? "proxy.test" : nil }]
        for (name, origins) in Self.configurations {
            for url in urls {
                for proxies in environments {
                    let decision = origins.decision(for: URLRequest(url: url), proxies: proxies)
                    #expect(
                        decision == origins.parsedDecision(for: url, proxies: proxies), "\(name): \(url.absoluteString)"
                    )
                }
            }
        }
    }

    @Test(arguments: [
        "http://localhost", "http://localhost/v1/me", "http://LOCALHOST:8080/v1/me", "http://127.0.0.1:1?q",
        "http://[::1]:65535#x", "ws://localhost:9000/socket", "https://api.example.test/v1/me",
        "wss://api.example.test",
    ])
    func thisMachineOverPlainHTTPAndEveryHTTPSHostAreSettledWithoutParsing(url: String) {
        let settled = Self.allPrefixes.match(url) != nil
        #expect(settled)
    }

    @Test(arguments: [
        // Another host, a longer one, or a user name before another host.
        "http://api.example.test/", "http://localhost.evil.test/", "http://localhost@evil.test/",
        "http://127.0.0.10/", "http://localhostx",
        // Not a port read here (parsing decides).
        "http://localhost:", "http://localhost:/v1", "http://localhost:65536/", "http://localhost:123456",
        "http://localhost:80:81", "http://localhost:8o", "http://localhost:80@evil.test/",
        // No host.
        "https:///v1/me", "https://:443", "https://@/",
    ])
    func anythingElseIsLeftToParsing(url: String) {
        let settled = Self.allPrefixes.match(url) != nil
        #expect(!settled)
    }

    /// The prefixes of ``AllowedOrigins/all``.
    private static let allPrefixes = SignedPrefixes(AllowedOrigins.everyOriginPrefixes(plainHTTP: false))
}
