import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// On Linux, URLSession (libcurl) sends even a request to `http://127.0.0.1` through the proxy
/// that `http_proxy` or `all_proxy` names, unless `no_proxy` lists its host. A token signed for
/// this machine over plain http would then reach the proxy, perhaps on another machine,
/// unencrypted. These environments are made up: the process's own is left alone.
@Suite("Proxies from the environment")
struct ProxyEnvironmentTests {
    private static func environment(_ variables: [String: String]) -> ProxyEnvironment {
        ProxyEnvironment { name in variables[name].flatMap { $0.isEmpty ? nil : $0 } }
    }

    private static let proxied = ["http_proxy": "http://user:secret@proxy.example.test:3128"]

    @Test func withoutProxyVariablesNothingIsProxied() {
        let none = Self.environment(["HTTPS_PROXY": "http://proxy.example.test:3128", "no_proxy": "example.test"])
        #expect(!none.mayProxyPlainRequests)
        #expect(none.remoteProxy(forPlain: "http", host: "127.0.0.1") == nil)
        #expect(none.remoteProxy(forPlain: "ws", host: "localhost") == nil)
    }

    @Test func aProxyOnAnotherMachineIsNamedByItsHostAlone() {
        let environment = Self.environment(Self.proxied)
        #expect(environment.mayProxyPlainRequests)
        #expect(environment.remoteProxy(forPlain: "http", host: "127.0.0.1") == "proxy.example.test")
        #expect(environment.remoteProxy(forPlain: "ws", host: "::1") == "proxy.example.test")
    }

    @Test(
        arguments: [
            ("http://proxy.example.test", "proxy.example.test"), ("PROXY.example.test:3128", "proxy.example.test"),
            ("socks5h://user:secret@10.0.0.7:1080", "10.0.0.7"), ("http://[fd00::7]:3128/", "fd00::7"),
            ("http://[broken", nil), ("http://user@:3128", nil), ("://", nil),
            // The address ends at the first "/", "?" or "#", and a scheme is only at the start: what
            // follows is no host (libcurl goes to 10.255.255.1 with each of these).
            ("http://10.255.255.1:3128/@127.0.0.1", "10.255.255.1"), ("10.255.255.1:3128?@localhost", "10.255.255.1"),
            ("http://10.255.255.1#@[::1]", "10.255.255.1"), ("10.255.255.1:3128/x://127.0.0.1", "10.255.255.1"),
            ("10.255.255.1/?u=http://localhost", "10.255.255.1"),
            // After the host, a port or nothing; a password with a "/" is not read as a host.
            ("socks5h://user:pa/ss@10.0.0.7:1080", nil), ("http://[::1]x:3128", nil), ("proxy.example.test:31x8", nil),
        ] as [(String, String?)])
    func theHostOfAProxyVariableIsReadWithoutItsCredentials(value: String, host: String?) {
        #expect(ProxyEnvironment.host(ofProxy: value) == host)
    }

    @Test func aProxyWhoseHostCannotBeReadIsNamedByItsVariable() {
        let environment = Self.environment(["all_proxy": "http://secret@[broken"])
        #expect(environment.remoteProxy(forPlain: "http", host: "localhost") == "all_proxy")
    }

    @Test func forHTTPOnlyTheLowerCaseVariableCountsThenAllProxy() {
        // libcurl ignores HTTP_PROXY for http.
        #expect(
            Self.environment(["HTTP_PROXY": "proxy.example.test"]).remoteProxy(forPlain: "http", host: "localhost")
                == nil)
        #expect(
            Self.environment(["all_proxy": "a.example.test"]).remoteProxy(forPlain: "http", host: "localhost")
                == "a.example.test")
        #expect(
            Self.environment(["ALL_PROXY": "b.example.test"]).remoteProxy(forPlain: "http", host: "localhost")
                == "b.example.test")
        // The first one set is used: a proxy on this machine, and the other is not.
        let local = Self.environment(["http_proxy": "http://127.0.0.1:3128", "all_proxy": "a.example.test"])
        #expect(local.remoteProxy(forPlain: "http", host: "localhost") == nil)
    }

    @Test func forWSEveryVariableThatMayApplyCounts() {
        let environment = Self.environment(["ws_proxy": "http://localhost:3128", "all_proxy": "a.example.test"])
        #expect(environment.remoteProxy(forPlain: "ws", host: "localhost") == "a.example.test")
        #expect(
            Self.environment(["WS_PROXY": "w.example.test"]).remoteProxy(forPlain: "ws", host: "localhost")
                == "w.example.test")
        #expect(
            Self.environment(["http_proxy": "h.example.test"]).remoteProxy(forPlain: "ws", host: "localhost")
                == "h.example.test")
    }

    @Test(arguments: ["http://127.0.0.1:3128", "localhost:8080", "http://[::1]:3128", "socks5://127.0.0.2"])
    func aProxyOnThisMachineKeepsTheRequestOnIt(proxy: String) {
        let environment = Self.environment(["http_proxy": proxy, "ws_proxy": proxy])
        #expect(environment.remoteProxy(forPlain: "http", host: "127.0.0.1") == nil)
        #expect(environment.remoteProxy(forPlain: "ws", host: "127.0.0.1") == nil)
    }

    @Test(arguments: [
        ("*", "127.0.0.1"), ("localhost,127.0.0.1", "127.0.0.1"), ("example.test, localhost", "localhost"),
        ("LOCALHOST", "localhost"), ("localhost", "api.localhost"), (".localhost", "api.localhost"), ("::1", "::1"),
    ])
    func noProxyListingTheHostKeepsItOffTheProxy(list: String, host: String) {
        var variables = Self.proxied
        variables["no_proxy"] = list
        #expect(Self.environment(variables).remoteProxy(forPlain: "http", host: host) == nil)
    }

    /// Entries that some libcurl versions do not read as covering the host: the request is taken
    /// to go through the proxy.
    @Test(
        arguments: [
            ("127.0.0.0/8", "127.0.0.1"), ("0.0.1", "127.0.0.1"), (".localhost", "localhost"), ("[::1]", "::1"),
            ("localhost.", "localhost"), ("host", "localhost"), ("*,localhost", "127.0.0.1"),
            ("localhost\t", "localhost"),
            // libcurl compares bytes (ASCII letters in any case): a Kelvin sign is not a "k".
            ("\u{212A}.localhost", "k.localhost"),
        ] as [(EscapedText, String)])
    func noProxyEntriesThatNotEveryLibcurlReadsDoNotCount(list: EscapedText, host: String) {
        var variables = Self.proxied
        variables["no_proxy"] = list.value
        #expect(Self.environment(variables).remoteProxy(forPlain: "http", host: host) == "proxy.example.test")
    }

    @Test func upperCaseNoProxyCountsOnlyWhenTheLowerCaseOneIsUnsetOrEmpty() {
        var variables = Self.proxied
        variables["NO_PROXY"] = "localhost"
        #expect(Self.environment(variables).remoteProxy(forPlain: "http", host: "localhost") == nil)
        variables["no_proxy"] = ""
        #expect(Self.environment(variables).remoteProxy(forPlain: "http", host: "localhost") == nil)
        variables["no_proxy"] = "example.test"
        #expect(Self.environment(variables).remoteProxy(forPlain: "http", host: "localhost") == "proxy.example.test")
    }

    // MARK: - Signing

    @Test(arguments: ["http://127.0.0.1:8080/v1/me", "http://LOCALHOST/x", "ws://[::1]:9000", "http://127.0.0.2/"])
    func aRequestToThisMachineThroughARemoteProxyIsRefusedUnsigned(url: String) throws {
        let request = URLRequest(url: try #require(URL(string: url)))
        let proxied = Self.environment(Self.proxied)
        let refused = AllowedOrigins.Decision.refuse(.insecureRequest(host: "proxy.example.test"))
        #expect(AllowedOrigins.all.decision(for: request, proxies: proxied) == refused)
        #expect(AllowedOrigins.all.parsedDecision(for: request.url, proxies: proxied) == refused)
        let named = AllowedOrigins.only(try #require(URL(string: url)))
        #expect(named.decision(for: request, proxies: proxied) == refused)
        // Without the proxy, or with plain http allowed anyway, it is signed.
        #expect(AllowedOrigins.all.decision(for: request, proxies: Self.environment([:])) == .sign)
        #expect(AllowedOrigins.all.allowingPlainHTTP().decision(for: request, proxies: proxied) == .sign)
    }

    @Test func anEncryptedRequestIsSignedWhateverTheProxy() throws {
        let request = URLRequest(url: try #require(URL(string: "https://127.0.0.1:8443/v1/me")))
        let proxied = Self.environment(Self.proxied.merging(["all_proxy": "a.example.test"]) { $1 })
        #expect(AllowedOrigins.all.decision(for: request, proxies: proxied) == .sign)
        #expect(
            AllowedOrigins.all.decision(for: URLRequest(url: URL(string: "wss://localhost")!), proxies: proxied)
                == .sign)
    }

    @Test func theRefusalNamesTheProxyButNotItsCredentials() throws {
        let request = URLRequest(url: try #require(URL(string: "http://localhost:8080/v1/me")))
        guard
            case .refuse(let error) = AllowedOrigins.all.decision(for: request, proxies: Self.environment(Self.proxied))
        else {
            Issue.record("signed through a remote proxy")
            return
        }
        #expect(error.description.contains("proxy.example.test"))
        #expect(!error.description.contains("secret"))
    }

    // MARK: - The process's environment

    /// Read without changing it: `setenv` while other tests' threads read the environment
    /// would be a race.
    @Test func theProcessEnvironmentIsReadWhereURLSessionReadsProxiesFromIt() {
        let unset = "REFRESHQUEUE_UNSET_\(UUID().uuidString.replacingOccurrences(of: "-", with: "_"))"
        #expect(ProxyEnvironment.processVariable(unset) == nil)
        #if canImport(FoundationNetworking)
        let path = ProcessInfo.processInfo.environment["PATH"]
        #expect(path != nil && ProxyEnvironment.processVariable("PATH") == path)
        #else
        #expect(ProxyEnvironment.processVariable("PATH") == nil)
        #endif
    }
}
