import Foundation
import Testing

@testable import RefreshQueue

/// `localizedDescription` is what most apps show: for every case it is the library's own
/// sentences, never Foundation's "The operation could not be completed".
@Suite("Errors explain themselves", .timeLimit(.minutes(1)))
struct ErrorSentenceTests {
    static let authorizationCodeErrors: [AuthorizationCodeError] = [
        .notTheRedirectURI, .stateMismatch, .authorizationFailed(error: "access_denied", description: nil),
        .authorizationFailed(error: "invalid_scope", description: "no"), .missingCode, .invalidCodeVerifier,
    ]

    static let refreshQueueErrors: [RefreshQueueError] = [
        .notAuthenticated, .refreshTimedOut, .invalidToken, .refreshFailed(URLError(.timedOut)), .excessiveRefresh,
        .cancelled, .invalidConfiguration("The header name is empty."),
        .authenticationUnreadable(AuthenticationStoreError.io(operation: "read /tmp/token.json", errno: EACCES)),
        .insecureRequest(host: "api.example.test"),
    ]

    @Test(arguments: authorizationCodeErrors)
    func anAuthorizationCodeErrorIsSentencesSayingWhatToDo(error: AuthorizationCodeError) {
        let text = (error as any Error).localizedDescription
        #expect(text == error.description)
        Self.expectSentences(text)
    }

    @Test(arguments: refreshQueueErrors)
    func aRefreshQueueErrorIsSentences(error: RefreshQueueError) {
        let text = (error as any Error).localizedDescription
        #expect(text == error.description)
        Self.expectSentences(text)
    }

    @Test(arguments: [FutureError.timedOut, .abandoned])
    func aFutureErrorIsASentence(error: FutureError) {
        Self.expectSentences((error as any Error).localizedDescription)
    }

    /// Linux's Foundation has no text for a URLError made from its code: "(URLError -1004)" was all.
    @Test(arguments: [
        (URLError.Code.cannotConnectToHost, "nothing accepted the connection"), (.timedOut, "timed out"),
        (.notConnectedToInternet, "offline"), (.cannotFindHost, "does not resolve"),
        (.secureConnectionFailed, "secure connection"), (.unknown, "the network failed"),
    ])
    func aTransportFailureSaysWhatHappenedInWords(code: URLError.Code, words: String) {
        let text = OAuth2Error.transport(URLError(code)).localizedDescription
        #expect(text.contains(words))
        #expect(text.contains("URLError \(code.rawValue)"))
        Self.expectSentences(text)
    }

    @Test func anInsecureRequestNamesTheProxyVariables() {
        let text = RefreshQueueError.insecureRequest(host: "proxy.example.test").localizedDescription
        #expect(text.contains("proxy.example.test") && text.contains("no_proxy") && text.contains("http_proxy"))
    }

    @Test func aDeclinedLoginSaysTheUserDeclined() {
        let text = AuthorizationCodeError.authorizationFailed(error: "access_denied", description: nil)
            .localizedDescription
        #expect(text.contains("declined"))
    }

    private static func expectSentences(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("could not be completed"), sourceLocation: sourceLocation)
        #expect(text.first?.isUppercase == true, sourceLocation: sourceLocation)
        #expect(text.hasSuffix("."), "\(text)", sourceLocation: sourceLocation)
    }
}
