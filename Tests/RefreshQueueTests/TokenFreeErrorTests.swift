import Foundation
import RefreshQueue
import Testing

/// A wrapped error's text shows only when it promises to carry no secret.
@Suite("TokenFreeError")
struct TokenFreeErrorTests {
    private enum KeychainFailure: TokenFreeError {
        case locked
        var description: String { "the keychain is locked" }
    }

    private struct LeakyFailure: Error, CustomStringConvertible {
        var description: String { "refresh token secret-refresh-token rejected" }
    }

    @Test func aWrappedTokenFreeErrorIsShownWithItsOwnText() {
        let failed = RefreshQueueError.refreshFailed(KeychainFailure.locked)
        let unreadable = RefreshQueueError.authenticationUnreadable(KeychainFailure.locked)
        #expect(failed.description.contains("the keychain is locked"))
        #expect(unreadable.description.contains("the keychain is locked"))
    }

    @Test func anyOtherWrappedErrorIsShownOnlyByItsTypeAndCode() {
        let failed = RefreshQueueError.refreshFailed(LeakyFailure())
        #expect(!failed.description.contains("secret-refresh-token"))
        #expect(failed.description.contains("LeakyFailure"))
    }
}
