import Foundation
import RefreshQueue
import TestSupport
import Testing

@Suite("AuthorizationScheme", .timeLimit(.minutes(2)))
struct AuthorizationSchemeTests {
    @Test func bearerIsTheDefaultHeaderFormat() throws {
        #expect(try AuthorizationScheme.bearer.headerValue(for: "abc.def-ghi_~+/=") == "Bearer abc.def-ghi_~+/=")
        #expect(AuthorizationScheme.bearer.headerName == "Authorization")
    }

    @Test(
        arguments: [
            "", "\r", "\n", "\r\n", "abc\r\nSet-Cookie: x", "a\0b", "a\u{1F}b", "a\u{7F}b", "a\u{85}b",
            "a\u{2028}b", "a\tb", " leading", "trailing ", "émoji🙂",
        ] as [EscapedText])
    func tokensThatCouldBreakOrSmuggleAHeaderAreRefused(token: EscapedText) {
        #expect(throws: RefreshQueueError.self) { try AuthorizationScheme.bearer.headerValue(for: token.value) }
    }

    @Test func aSpaceInsideATokenIsAllowed() throws {
        #expect(try AuthorizationScheme.basic.headerValue(for: "a b") == "Basic a b")
    }

    @Test(arguments: ["", "Bearer token", "Bad\r\n", "Ünicode", "semi;colon", "a:b"] as [EscapedText])
    func schemesAndHeaderNamesThatAreNotHTTPTokensAreRefused(name: EscapedText) {
        #expect(throws: RefreshQueueError.self) { try AuthorizationScheme(scheme: name.value) }
        #expect(throws: RefreshQueueError.self) { try AuthorizationScheme(headerName: name.value) }
    }

    @Test func customSchemesAndHeaderNamesFormatTheValue() throws {
        #expect(try AuthorizationScheme(scheme: "DPoP").headerValue(for: "t") == "DPoP t")
        let apiKey = try AuthorizationScheme(headerName: "X-Api-Key")
        #expect(apiKey.headerName == "X-Api-Key")
        #expect(try apiKey.headerValue(for: "t") == "t")
    }

    @Test func errorDescriptionsNeverContainTheToken() throws {
        do {
            _ = try AuthorizationScheme.bearer.headerValue(for: "secret\r\n")
            Issue.record("expected an error")
        } catch {
            #expect(!String(describing: error).contains("secret"))
        }
    }
}
