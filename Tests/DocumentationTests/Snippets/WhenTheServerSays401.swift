// The Swift snippets of WhenTheServerSays401.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DocsB {
    static func sendWithRetry(
        _ authentication: RefreshingRequestClosure<OAuth2Authentication>, meURL: URL, session: URLSession
    ) async {
        do {
            let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: session)
            handle(data, response)  // a 401 here answers the retry: the new token was refused too
        } catch let error as any RefreshFailure where error.requiresReauthentication {
            showLogin()
        } catch {
            show(error)
        }
    }

    @available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
    static func sendYourself(
        _ authentication: RefreshingRequestClosure<OAuth2Authentication>, meURL: URL, session: URLSession
    ) async throws {
        let request = try await authentication.authorize(URLRequest(url: meURL))
        var (data, response) = try await session.data(for: request)
        if let http = response as? HTTPURLResponse, http.statusCode == 401 {
            let retry = try await authentication.reauthorize(request, response: http)
            (data, response) = try await session.data(for: retry)  // once: never reauthorize the retry
        }
        handle(data, response)
    }

    static func reauthorizeWithCallback(
        _ authentication: RefreshingRequestClosure<OAuth2Authentication>, request: URLRequest,
        response: URLResponse, session: URLSession
    ) {
        authentication.reauthorize(request, response: response) { result in
            switch result {
            case .success(let retry):
                session.dataTask(with: retry) { data, response, error in finish(data, response, error) }.resume()
            case .failure(let error):
                show(error)
            }
        }
    }
}

/// Whether a 401 blames the token it carried: a challenge with `error="invalid_token"`, or one
/// without an error code.
func blamesToken(_ response: HTTPURLResponse) -> Bool {
    guard response.statusCode == 401 else { return false }
    guard let challenge = response.value(forHTTPHeaderField: "WWW-Authenticate"),
        challenge.range(of: "error=", options: .caseInsensitive) != nil
    else { return true }
    return challenge.range(of: "invalid_token", options: .caseInsensitive) != nil
}
