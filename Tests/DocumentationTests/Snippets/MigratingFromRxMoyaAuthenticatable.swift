// The Swift snippets of MigratingFromRxMoyaAuthenticatable.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct MyAuthentication: RefreshableAuthentication {
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date

    var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 60 }

    func refresh() -> Future<MyAuthentication> {
        Future { complete in
            tokenClient.refresh(using: refreshToken) { result in
                complete(
                    result.map { response in
                        let fresh = MyAuthentication(
                            accessToken: response.accessToken,
                            // Keep the old refresh token when the server sends none (RFC 6749 §6).
                            refreshToken: response.refreshToken ?? refreshToken,
                            expiresAt: Date() + response.expiresIn)
                        tokenStore.save(fresh)
                        return fresh
                    })
            }
        }
    }

    static func find() -> MyAuthentication? { tokenStore.load() }
}

enum MigrationSnippets {
    static func provider() -> MoyaProvider<SpotifyAPI> {
        let authentication = RefreshingRequestClosure<MyAuthentication>()
        let provider = MoyaProvider<SpotifyAPI>(
            requestClosure: authentication.requestClosure { error in MoyaError.underlying(error, nil) })
        return provider
    }

    static func chain() {
        loadProfile()
            .map { profile in profile.displayName }
            .flatMap { name in greet(name) }
            .observe(on: .main) { result in
                switch result {
                case .success(let greeting): show(greeting)
                case .failure(let error): show(error)
                }
            }
    }

    static func signAsync(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) async throws {
        let signed = try await authentication.authorize(URLRequest(url: meURL))
        _ = signed
    }

    static func sendAsync(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) async throws {
        let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
        handle(data, response)
    }

    static func awaitValue() async throws -> String {
        let greeting = try await greet("Ada").value
        return greeting
    }

    static func timeout() -> RefreshingRequestClosure<MyAuthentication> {
        let authentication = RefreshingRequestClosure<MyAuthentication>(refreshTimeout: 10)
        return authentication
    }
}

/// An authentication whose token client is async: only its `refresh()` is shown in the article.
struct AsyncRefreshingAuthentication: Sendable {
    let refreshToken: String

    func refresh() -> Future<MyAuthentication> {
        Future {
            let response = try await tokenClient.refresh(using: refreshToken)
            return MyAuthentication(
                accessToken: response.accessToken,
                refreshToken: response.refreshToken ?? refreshToken,
                expiresAt: Date() + response.expiresIn)
        }
    }
}
