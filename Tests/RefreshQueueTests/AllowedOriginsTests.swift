import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which requests get the token: the API's origins only, never plain http to another machine.
@Suite("Allowed origins", .timeLimit(.minutes(2)))
struct AllowedOriginsTests {
    private func closure(_ origins: AllowedOrigins, service: TokenService = TokenService()) -> Closure {
        service.store(service.authentication("secret-token"))
        return Closure(options: .init(origins: origins), find: service.find)
    }

    private func signed(_ url: String, by closure: Closure) async throws -> String? {
        try await closure.authorize(URLRequest(url: URL(string: url)!)).value(forHTTPHeaderField: "Authorization")
    }

    @Test(arguments: [
        "https://api.example.test/v1/me", "https://API.Example.TEST/v1/me", "https://api.example.test:443/v1/me",
        "https://api.example.test", "https://api.example.test?q=1", "HTTPS://api.example.test/x",
    ])
    func requestsToTheAllowedOriginAreSigned(url: String) async throws {
        let closure = closure(.only(URL(string: "https://api.example.test/ignored/path")!))
        #expect(try await signed(url, by: closure) == "Bearer secret-token")
    }

    @Test(arguments: [
        "https://other.example.test/v1/me", "https://api.example.test.evil.test/v1/me",
        "https://api.example.test@evil.test/v1/me", "https://api.example.test:8443/v1/me",
        "http://api.example.test/v1/me", "wss://api.example.test/socket", "file:///etc/passwd",
    ])
    func requestsToAnyOtherOriginPassUnsigned(url: String) async throws {
        let closure = closure(.only(URL(string: "https://api.example.test")!))
        let request = URLRequest(url: URL(string: url)!)
        #expect(try await closure.authorize(request) == request)
        let results = Completions<Result<URLRequest, any Error>>()
        closure.authorize(request) { results.record(0, $0) }
        #expect(results.results[0]?.authorization == nil)
    }

    /// README: `.all` signs https (and wss) requests; a URL with no host, or of another scheme than
    /// http, https, ws and wss (with a port or without), has no origin the token could be meant
    /// for, and passes unchanged.
    @Test(arguments: [
        ("https://anything.example.test/v1/me", true), ("wss://anything.example.test/socket", true),
        ("file:///etc/passwd", false), ("app://api/v1/me", false), ("app://api:8080/v1/me", false),
        ("/v1/me", false),
        // https, but no host to send a token to.
        ("https:///v1/me", false), ("https://:443/v1/me", false), ("https://@/v1/me", false),
        ("https://user@api.example.test/v1/me", true), ("https://[::1]/v1/me", true),
    ])
    func everyOriginSignsHTTPSAndPassesURLsWithoutAnOrigin(url: String, isSigned: Bool) async throws {
        let closure = closure(.all)
        let request = URLRequest(url: URL(string: url)!)
        let result = try await closure.authorize(request)
        #expect(result.value(forHTTPHeaderField: "Authorization") == (isSigned ? "Bearer secret-token" : nil))
        if !isSigned { #expect(result == request) }
    }

    @Test(arguments: [
        "http://api.example.test/v1/me", "http://10.0.0.8:8080/v1/me", "HTTP://Example.COM",
        "ws://api.example.test/socket",
        // Only look like 127.x.x.x: the resolver asks DNS for the first two (not numbers to it),
        // and some URL parsers read the third as octal, 87.0.0.1.
        "http://127.0.0.08/v1/me", "http://127.0.0.09/v1/me", "http://0127.0.0.1/v1/me", "http://127.00.0.1/v1/me",
        "http://127.0.0.256/v1/me", "http://127.0.0.1.example.test/v1/me",
    ])
    func plainHTTPToAnotherMachineIsRefusedWithATypedError(url: String) async throws {
        let closure = closure(.all)
        await #expect {
            try await closure.authorize(URLRequest(url: URL(string: url)!))
        } throws: { error in
            guard case RefreshQueueError.insecureRequest(let host) = error else { return false }
            let text = error.localizedDescription
            return url.lowercased().contains(host) && text.contains(host) && !text.contains("secret-token")
        }
    }

    @Test(arguments: [
        "http://localhost:8080/v1/me", "http://127.0.0.1/v1/me", "http://[::1]:9000/", "http://api.localhost/",
        "http://127.255.10.0/v1/me", "http://127.0.0.0/",
    ])
    func plainHTTPToThisMachineIsSigned(url: String) async throws {
        #expect(try await signed(url, by: closure(.all)) == "Bearer secret-token")
    }

    @Test func plainHTTPIsSignedOnlyWhenTheAppAllowsItExplicitly() async throws {
        let origin = URL(string: "http://dev.example.test:8080")!
        await #expect(throws: RefreshQueueError.self) {
            try await closure(.only(origin)).authorize(URLRequest(url: origin.appendingPathComponent("v1/me")))
        }
        let allowed = closure(.only(origin).allowingPlainHTTP())
        #expect(try await signed("http://dev.example.test:8080/v1/me", by: allowed) == "Bearer secret-token")
        #expect(try await signed("http://other.example.test:8080/v1/me", by: allowed) == nil)
    }

    @Test func theRequestPredicateStillExemptsRequestsFirst() async throws {
        let service = TokenService()
        service.store(service.authentication("secret-token"))
        let closure = Closure(options: .init(requiresAuthentication: { _ in false }), find: service.find)
        let request = URLRequest(url: URL(string: "http://plain.example.test/public")!)
        #expect(try await closure.authorize(request) == request)
    }

    @Test func aFourOhOneFromAnotherOriginNeverCausesARefresh() async throws {
        let service = TokenService()
        let closure = closure(.all, service: service)
        let sent = try await closure.authorize(makeRequest())
        let elsewhere = HTTPURLResponse(
            url: URL(string: "https://cdn.example.test/v1/me")!, statusCode: 401, httpVersion: nil, headerFields: nil)!
        let again = try await closure.reauthorize(sent, response: elsewhere)
        #expect(again.value(forHTTPHeaderField: "Authorization") == "Bearer secret-token")
        #expect(service.refreshCount == 0)
        let here = HTTPURLResponse(url: sent.url!, statusCode: 401, httpVersion: nil, headerFields: nil)!
        _ = try await closure.reauthorize(sent, response: here)
        #expect(service.refreshCount == 1)
    }
}
