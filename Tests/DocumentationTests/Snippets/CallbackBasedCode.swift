// The Swift snippets of CallbackBasedCode.md, verbatim.

import Dispatch
import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum CallbackBasedCodeSnippets {
    static func showSlowNetworkNotice() {}

    static func authorizeAndCancel(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) {
        let task = authentication.authorize(URLRequest(url: meURL)) { result in
            switch result {
            case .success(let signed):
                URLSession.shared.dataTask(with: signed) { data, response, error in
                    // …
                }.resume()
            case .failure(RefreshQueueError.cancelled):
                break  // the screen went away
            case .failure(let error):
                show(error)
            }
        }
        // When the screen goes away:
        task.cancel()
    }

    struct APIClient: Sendable {
        let authentication: RefreshingRequestClosure<MyAuthentication>
        let session: URLSession

        func send(
            _ request: URLRequest, completion: @escaping @Sendable (Result<(Data, URLResponse), any Error>) -> Void
        ) {
            authentication.authorize(request) { result in
                switch result {
                case .success(let signed):
                    transfer(signed) { outcome in
                        if case .success((_, let response)) = outcome,
                            (response as? HTTPURLResponse)?.statusCode == 401
                        {
                            // Refreshes once for every request rejected with this token, then signs again.
                            authentication.reauthorize(signed, response: response) { result in
                                switch result {
                                case .success(let retry): transfer(retry, completion: completion)
                                case .failure(let error): completion(.failure(error))
                                }
                            }
                        } else {
                            completion(outcome)
                        }
                    }
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }

        private func transfer(
            _ request: URLRequest, completion: @escaping @Sendable (Result<(Data, URLResponse), any Error>) -> Void
        ) {
            session.dataTask(with: request) { data, response, error in
                if let response, error == nil {
                    completion(.success((data ?? Data(), response)))
                } else {
                    completion(.failure(error ?? URLError(.badServerResponse)))
                }
            }.resume()
        }
    }

    static func foreground(_ authentication: RefreshingRequestClosure<MyAuthentication>) {
        authentication.refreshIfNeeded { result in
            if case .failure(let error) = result { log("no fresh token: \(error)") }
        }
    }

    static func mainQueue() -> RefreshingRequestClosure<MyAuthentication> {
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: .init(completionQueue: .main))
        return authentication
    }

    struct Me: Decodable, Sendable {
        let displayName: String
    }

    enum ProfileError: Error {
        case unavailable(underlying: any Error)
    }

    struct ProfileLoader: Sendable {
        let authentication: RefreshingRequestClosure<MyAuthentication>
        let session: URLSession

        func signed(_ request: URLRequest) -> Future<URLRequest> {
            Future { complete in
                authentication.authorize(request, completion: complete)
            }
        }

        func data(for request: URLRequest) -> Future<Data> {
            Future { complete in
                session.dataTask(with: request) { data, response, error in
                    if let data, error == nil {
                        complete(.success(data))
                    } else {
                        complete(.failure(error ?? URLError(.badServerResponse)))
                    }
                }.resume()
            }
        }

        func showProfile(meURL: URL) {
            signed(URLRequest(url: meURL))
                .flatMap { request in data(for: request) }
                .map { data in try JSONDecoder().decode(Me.self, from: data) }
                .mapError { error in ProfileError.unavailable(underlying: error) }
                .observe(on: .main) { result in
                    switch result {
                    case .success(let me): show(me.displayName)
                    case .failure(let error): show(error)
                    }
                }
        }

        func displayName(meURL: URL) -> Future<String> {
            let name = signed(URLRequest(url: meURL))
                .flatMap { request in data(for: request) }
                .map { data in try JSONDecoder().decode(Me.self, from: data).displayName }
                .recover { _ in "you" }
            return name
        }
    }

    static func timingOut() {
        loadProfile()
            .timeout(after: 10)
            .observe(on: .main) { result in
                switch result {
                case .success(let profile): show(profile.displayName)
                case .failure(FutureError.timedOut): showSlowNetworkNotice()
                case .failure(let error): show(error)
                }
            }
    }

    static func logIn(
        login: AuthorizationCodeRequest, redirectURL: URL, client: TokenEndpointClient,
        store: FileAuthenticationStore<OAuth2Token>
    ) throws {
        let code = try login.code(fromRedirect: redirectURL)
        Future { client.exchange(code: code, for: login, completion: $0) }.observe(on: .main) { result in
            switch result {
            case .success(let token):
                do {
                    try store.save(token)
                } catch {
                    show(error)
                }
            case .failure(let error):
                show(error)
            }
        }
    }

    /// Where the app keeps its accounts.
    struct Accounts: Sendable {
        func save(_ account: AccountAuthentication) {}
        func current() -> AccountAuthentication? { nil }
    }

    static let accounts = Accounts()

    struct AccountAuthentication: RefreshableAuthentication {
        let token: OAuth2Token
        let accountID: String
        let client: TokenEndpointClient

        var accessToken: String { token.accessToken }
        var isRefreshNeeded: Bool { token.isRefreshNeeded(at: Date()) }
        var isRefreshRecommended: Bool { token.isRefreshRecommended(at: Date()) }

        func refresh() -> Future<AccountAuthentication> {
            Future { try await client.refresh(token) }.map { fresh in
                let refreshed = AccountAuthentication(token: fresh, accountID: accountID, client: client)
                accounts.save(refreshed)
                return refreshed
            }
        }

        static func find() -> AccountAuthentication? { accounts.current() }
    }
}
