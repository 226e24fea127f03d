import Foundation
import Testing

@testable import RefreshQueue

@Suite("SHA-256 and PKCE", .timeLimit(.minutes(2)))
struct PKCETests {
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256MatchesTheFIPS180Examples(message: String, digest: String) {
        #expect(hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test func sha256OfAMillionAsMatchesTheNISTVector() {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(SHA256.hash(million)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func theCodeChallengeOfRFC7636AppendixBIsReproduced() throws {
        let request = try AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.example.test/authorize")!, clientID: "client",
            redirectURI: "myapp://callback", state: "xyz", codeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(request.codeChallenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func theAuthorizationURLAsksForS256WithAFreshStateAndVerifier() throws {
        let request = AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.example.test/authorize?show_dialog=true")!,
            clientID: "client id", redirectURI: "myapp://callback", scope: "user-read-private playlist-read")
        let other = AuthorizationCodeRequest(
            authorizationEndpoint: request.authorizationEndpoint, clientID: "client id", redirectURI: "myapp://callback"
        )
        #expect(request.state != other.state && request.codeVerifier != other.codeVerifier)
        #expect(request.codeVerifier.count == 64)
        #expect(request.codeVerifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let query = Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == "client id")
        #expect(query["redirect_uri"] == "myapp://callback")
        #expect(query["scope"] == "user-read-private playlist-read")
        #expect(query["state"] == request.state)
        #expect(query["code_challenge"] == request.codeChallenge)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["show_dialog"] == "true")
        #expect(!request.url.absoluteString.contains(request.codeVerifier))
        for text in [request.description, String(reflecting: request)] {
            #expect(!text.contains(request.codeVerifier))
        }
        var dumped = ""
        dump(request, to: &dumped)
        #expect(!dumped.contains(request.codeVerifier))
    }

    @Test(arguments: ["short", String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "!"])
    func aCodeVerifierOutsideRFC7636IsRefused(verifier: String) {
        #expect(throws: AuthorizationCodeError.invalidCodeVerifier) {
            try AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
                redirectURI: "myapp://callback", state: "s", codeVerifier: verifier)
        }
    }

    /// RFC 7636 §4.1: 43 to 128 characters, both ends included.
    @Test(arguments: [(42, false), (43, true), (128, true), (129, false)])
    func aCodeVerifierIsTakenFrom43To128Characters(length: Int, isTaken: Bool) {
        let made = Result { () throws(AuthorizationCodeError) in
            try AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
                redirectURI: "myapp://callback", state: "s", codeVerifier: String(repeating: "v", count: length))
        }
        switch made {
        case .success(let request): #expect(isTaken && request.codeVerifier.count == length)
        case .failure(let error): #expect(!isTaken && error == .invalidCodeVerifier)
        }
    }

    /// An empty `state` would match a redirect that carries none: refused, where one character is not.
    @Test func anEmptyStateIsRefusedAndOneCharacterIsNot() throws {
        #expect(throws: AuthorizationCodeError.invalidCodeVerifier) {
            try AuthorizationCodeRequest(
                authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
                redirectURI: "myapp://callback", state: "", codeVerifier: String(repeating: "v", count: 43))
        }
        let request = try AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
            redirectURI: "myapp://callback", state: "s", codeVerifier: String(repeating: "v", count: 43))
        #expect(throws: AuthorizationCodeError.stateMismatch) {
            try request.code(fromRedirect: URL(string: "myapp://callback?code=abc&state=")!)
        }
    }

    /// A redirect is believed only at the redirect URI's scheme, host, port and path; letter case
    /// counts only in the path.
    @Test(
        arguments: [
            ("http://127.0.0.1:8000/callback", true), ("HTTP://127.0.0.1:8000/callback", true),
            ("http://127.0.0.1:8001/callback", false), ("http://127.0.0.1/callback", false),
            ("http://127.0.0.1:8000/callback/", false), ("http://127.0.0.1:8000/Callback", false),
            ("http://127.0.0.1:8000/other", false), ("https://127.0.0.1:8000/callback", false),
            ("http://127.0.0.2:8000/callback", false),
        ])
    func aRedirectIsBelievedOnlyAtTheRedirectURI(target: String, isBelieved: Bool) throws {
        let request = try AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
            redirectURI: "http://127.0.0.1:8000/callback", state: "s", codeVerifier: String(repeating: "v", count: 43))
        let redirect = URL(string: target + "?code=abc&state=s")!
        if isBelieved {
            #expect(try request.code(fromRedirect: redirect) == "abc")
        } else {
            #expect(throws: AuthorizationCodeError.notTheRedirectURI) { try request.code(fromRedirect: redirect) }
        }
    }

    @Test func theRedirectIsCheckedBeforeItsCodeIsBelieved() throws {
        let request = try AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
            redirectURI: "myapp://callback", state: "the-state", codeVerifier: String(repeating: "v", count: 43))
        #expect(try request.code(fromRedirect: URL(string: "myapp://callback?code=abc&state=the-state")!) == "abc")
        #expect(throws: AuthorizationCodeError.stateMismatch) {
            try request.code(fromRedirect: URL(string: "myapp://callback?code=abc&state=forged")!)
        }
        #expect(throws: AuthorizationCodeError.stateMismatch) {
            try request.code(fromRedirect: URL(string: "myapp://callback?code=abc")!)
        }
        #expect(throws: AuthorizationCodeError.stateMismatch) {
            try request.code(fromRedirect: URL(string: "myapp://callback?error=access_denied")!)
        }
        #expect(throws: AuthorizationCodeError.authorizationFailed(error: "access_denied", description: "no")) {
            try request.code(
                fromRedirect: URL(string: "myapp://callback?error=access_denied&error_description=no&state=the-state")!)
        }
        #expect(throws: AuthorizationCodeError.missingCode) {
            try request.code(fromRedirect: URL(string: "myapp://callback?state=the-state")!)
        }
        #expect(throws: AuthorizationCodeError.notTheRedirectURI) {
            try request.code(fromRedirect: URL(string: "https://evil.test/callback?code=abc&state=the-state")!)
        }
    }

    /// One code is believed; none, an empty one or two (which one would the server have meant?)
    /// are refused alike.
    @Test(
        arguments: [
            ("code=abc&state=the-state", "abc"), ("code=abc&code=def&state=the-state", nil),
            ("code=&state=the-state", nil), ("code=abc&code=abc&state=the-state", nil),
        ] as [(String, String?)])
    func aRedirectCarryingOtherThanOneCodeIsRefused(query: String, code: String?) throws {
        let request = try AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://a.test/authorize")!, clientID: "c",
            redirectURI: "myapp://callback", state: "the-state", codeVerifier: String(repeating: "v", count: 43))
        let redirect = URL(string: "myapp://callback?\(query)")!
        if let code {
            #expect(try request.code(fromRedirect: redirect) == code)
        } else {
            #expect(throws: AuthorizationCodeError.missingCode) { try request.code(fromRedirect: redirect) }
        }
    }
}
