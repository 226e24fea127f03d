// The Swift snippets of WhereTheTokenGoes.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum WhereTheTokenGoesSnippets {
    static func schemes() throws -> [AuthorizationScheme] {
        let bearer: AuthorizationScheme = .bearer  // Authorization: Bearer <token>
        let basic: AuthorizationScheme = .basic  // Authorization: Basic <token>
        let custom = try AuthorizationScheme(scheme: "Token")  // Authorization: Token <token>
        let apiKey = try AuthorizationScheme(headerName: "X-API-Key")  // X-API-Key: <token>
        return [bearer, basic, custom, apiKey]
    }

    static func predicate() -> @Sendable (URLRequest) -> Bool {
        let requiresAuthentication: @Sendable (URLRequest) -> Bool = { request in
            request.url?.path != "/api/token"
        }
        return requiresAuthentication
    }

    static func origins(apiURL: URL, uploadURL: URL, developmentServerURL: URL) -> [AllowedOrigins] {
        let api: AllowedOrigins = .only(apiURL)
        let apiAndUploads: AllowedOrigins = .only(apiURL, uploadURL)
        let development: AllowedOrigins = .only(developmentServerURL).allowingPlainHTTP()
        return [api, apiAndUploads, development]
    }

    static func send(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) async throws {
        let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
        handle(data, response)
    }

    static func session() -> URLSession {
        let authentication = RefreshingRequestClosure<MyAuthentication>()
        let session = URLSession(
            configuration: .default, delegate: RedirectSigningDelegate(authentication), delegateQueue: nil)
        return session
    }

    static func logErrors(
        _ authentication: RefreshingRequestClosure<MyAuthentication>, request: URLRequest, session: URLSession
    ) async {
        do {
            let (data, response) = try await authentication.data(for: request, using: session)
            handle(data, response)
        } catch {
            log("request failed: \(error)")  // the library's errors never contain the token
        }
    }
}

final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let authentication: RefreshingRequestClosure<MyAuthentication>

    init(authentication: RefreshingRequestClosure<MyAuthentication>) {
        self.authentication = authentication
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        authentication.authorizeRedirect(request, answering: response, task: task, completion: completionHandler)
    }
}

extension MyAuthentication: CustomStringConvertible, CustomDebugStringConvertible {
    var description: String { "MyAuthentication(expires \(expiresAt); tokens redacted)" }
    var debugDescription: String { description }
}
