// The Swift snippets of URLSession.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum URLSessionSnippets {
    static func post(
        _ authentication: RefreshingRequestClosure<MyAuthentication>, session: URLSession, playlistsURL: URL,
        playlist: [String: String]
    ) async throws {
        var request = URLRequest(url: playlistsURL)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(playlist)
        let (data, response) = try await authentication.data(for: request, using: session)
        handle(data, response)
    }

    struct APIClient: Sendable {
        let authentication: RefreshingRequestClosure<MyAuthentication>
        let session: URLSession

        @available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
        func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
            let signed = try await authentication.authorize(request)
            let (data, response) = try await session.data(for: signed)
            guard (response as? HTTPURLResponse)?.statusCode == 401 else { return (data, response) }
            // Refreshes once for every request rejected with this token, then signs again.
            let retry = try await authentication.reauthorize(signed, response: response)
            return try await session.data(for: retry)
        }
    }

    static func session() -> URLSession {
        let authentication = RefreshingRequestClosure<MyAuthentication>()
        let session = URLSession(
            configuration: .default, delegate: RedirectSigningDelegate(authentication), delegateQueue: nil)
        return session
    }

    @available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
    static func taskDelegate(_ authentication: RefreshingRequestClosure<MyAuthentication>, signed: URLRequest) {
        let task = URLSession.shared.dataTask(with: signed) { data, response, error in
            // …
        }
        task.delegate = RedirectSigningDelegate(authentication)
        task.resume()
    }
}
