import Dispatch
import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The token endpoint's HTTP authentication challenges are refused only where the system's own
/// handling hangs (Linux); Apple platforms answer them as their URLSession does.
@Suite("HTTP authentication challenges at the token endpoint", .timeLimit(.minutes(1)))
struct HTTPChallengeHandlingTests {
    @Test func onlyLinuxRefusesChallenges() {
        #if canImport(FoundationNetworking)
        #expect(HTTPChallengeHandling.platform == .refuse)
        #else
        #expect(HTTPChallengeHandling.platform == .systemDefault)
        #endif
    }

    @Test(arguments: [
        (NSURLAuthenticationMethodHTTPBasic, false), (NSURLAuthenticationMethodHTTPDigest, false),
        (NSURLAuthenticationMethodNTLM, false), (NSURLAuthenticationMethodNegotiate, false),
        (NSURLAuthenticationMethodDefault, false), (NSURLAuthenticationMethodHTTPBasic, true),
    ])
    func anHTTPChallengeIsCancelledOrLeftToTheSystem(method: String, proxy: Bool) {
        let challenge = Self.challenge(method: method, proxy: proxy)
        #expect(HTTPChallengeHandling.refuse.disposition(for: challenge) == .cancelAuthenticationChallenge)
        #expect(HTTPChallengeHandling.systemDefault.disposition(for: challenge) == .performDefaultHandling)
    }

    @Test func aServerTrustChallengeGoesToTheApp() {
        // NSURLAuthenticationMethodServerTrust's value (Linux's Foundation does not declare it).
        let challenge = Self.challenge(method: "NSURLAuthenticationMethodServerTrust", proxy: false)
        #expect(HTTPChallengeHandling.refuse.disposition(for: challenge) == nil)
        #expect(HTTPChallengeHandling.systemDefault.disposition(for: challenge) == nil)
    }

    #if canImport(FoundationNetworking)
    /// Why Linux refuses: a task whose Basic challenge gets the default handling is still
    /// running two seconds after the 401 came (swift-corelibs-foundation waits for a credential
    /// forever, whatever the request's timeout). Should this fail, a newer Foundation has fixed
    /// it, and `HTTPChallengeHandling.platform` may leave challenges to the system there too.
    @Test func theDefaultHandlingOfABasicChallengeHangsOnLinux() async throws {
        let server = try LoopbackServer { _ in
            .answer(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"token\""], body: Data("no".utf8))
        }
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral, delegate: DefaultHandling(), delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: server.baseURL.appendingPathComponent("token"))
        request.timeoutInterval = 1
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { _, _, _ in done.signal() }
        task.resume()
        // Waited for on a thread of its own, not on the pool that other tests' awaits run on.
        let hung = await onAThreadOfItsOwn { done.wait(timeout: .now() + 2) == .timedOut }
        #expect(hung)
        #expect(server.requests.count == 1)
        task.cancel()
        let ended = await onAThreadOfItsOwn { done.wait(timeout: .now() + 10) == .success }
        #expect(ended)
    }

    /// And with the platform's handling the same answer ends at once, as the server's error.
    @Test func theTokenEndpointsBasicChallengeEndsAtOnceOnLinux() async throws {
        let server = try LoopbackServer { _ in
            .answer(status: 401, headers: ["WWW-Authenticate": "Basic realm=\"token\""], body: Data("no".utf8))
        }
        defer { server.stop() }
        let client = TokenEndpointClient(
            tokenURL: server.baseURL.appendingPathComponent("token"), clientID: "id", clientSecret: "secret-0123",
            requestTimeout: 60)
        let started = DispatchTime.now()
        await #expect {
            _ = try await client.refresh(OAuth2Token(accessToken: "old", refreshToken: "rt-0123"))
        } throws: { error in
            guard case OAuth2Error.tokenEndpoint(let answer) = error else { return false }
            return answer.code == .invalidClient && answer.status == 401
        }
        #expect(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds < 30_000_000_000)
    }

    private final class DefaultHandling: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            completionHandler(.performDefaultHandling, nil)
        }
    }
    #endif

    private static func challenge(method: String, proxy: Bool) -> URLAuthenticationChallenge {
        let space =
            proxy
            ? URLProtectionSpace(
                proxyHost: "proxy.example.test", port: 3128, type: NSURLProtectionSpaceHTTPProxy, realm: nil,
                authenticationMethod: method)
            : URLProtectionSpace(
                host: "auth.example.test", port: 443, protocol: "https", realm: "token", authenticationMethod: method)
        return URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil,
            error: nil, sender: NoSender())
    }

    private final class NoSender: NSObject, URLAuthenticationChallengeSender, Sendable {
        func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
        func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
        func cancel(_ challenge: URLAuthenticationChallenge) {}
        func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
        func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
    }
}
