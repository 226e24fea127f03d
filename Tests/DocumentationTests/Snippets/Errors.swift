// The Swift snippets of Errors.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DocsB {
    static func present(_ error: any Error) {
        switch error {
        case is CancellationError, RefreshQueueError.cancelled:
            break  // the app stopped waiting: nothing to show
        case RefreshQueueError.authenticationUnreadable:
            retryWhenUnlocked()  // the user is still logged in
        case let error as any RefreshFailure where error.requiresReauthentication:
            showLogin()  // nobody is logged in, or the server refused the refresh token
        case let error as any RefreshFailure where error.isTransportFailure:
            showOffline()  // the refresh could not reach the token endpoint
        case let error as any RefreshFailure where error.retryAfter != nil:
            showBusy(retryAfter: error.retryAfter)
        case is URLError:
            showOffline()  // the API (or your own refresh) could not be reached
        default:
            show(error)  // the library's errors never contain a token
        }
    }

    static func exchange(
        code: String, login: AuthorizationCodeRequest, client: TokenEndpointClient,
        store: FileAuthenticationStore<OAuth2Token>
    ) async {
        do {
            let token = try await client.exchange(code: code, for: login)
            try store.save(token)
        } catch let error as OAuth2Error {
            switch error {
            case .tokenEndpoint(let answer) where answer.code == .invalidGrant:
                startLoginAgain()  // expired, used already, or not matching the code verifier
            case .tokenEndpoint(let answer):
                report(answer.code.rawValue, answer.errorDescription)
            case .transport, .server:
                showOffline()
            default:
                show(error)
            }
        } catch {
            show(error)
        }
    }
}

enum SessionError: Error, RefreshFailure {
    case revoked
    case offline(URLError)
    case throttled(seconds: TimeInterval)

    var requiresReauthentication: Bool {
        if case .revoked = self { return true }
        return false
    }
    var isTransportFailure: Bool {
        if case .offline = self { return true }
        return false
    }
    var retryAfter: TimeInterval? {
        if case .throttled(let seconds) = self { return seconds }
        return nil
    }
}
