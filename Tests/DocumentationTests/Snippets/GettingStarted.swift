// The Swift snippets of GettingStarted.md, verbatim.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The article's own `MyAuthentication` (it recommends a refresh ahead) and what it uses, nested so
/// that they do not clash with the declarations of the other articles' snippets.
enum GettingStartedSnippets {
    struct MyAuthentication: RefreshableAuthentication {
        let accessToken: String
        let refreshToken: String
        let expiresAt: Date

        // Within the last 10 seconds, requests wait for a refresh.
        var isRefreshNeeded: Bool { expiresAt.timeIntervalSinceNow < 10 }
        // Within the last 5 minutes, one refresh runs in the background; nobody waits.
        var isRefreshRecommended: Bool { expiresAt.timeIntervalSinceNow < 300 }

        func refresh() -> Future<MyAuthentication> {
            Future { complete in
                tokenClient.refresh(using: refreshToken) { result in
                    let refreshed = result.map { response in
                        MyAuthentication(
                            accessToken: response.accessToken,
                            // Keep the old refresh token when the server sends none (RFC 6749 §6).
                            refreshToken: response.refreshToken ?? refreshToken,
                            expiresAt: Date() + response.expiresIn)
                    }
                    if case .success(let fresh) = refreshed { keychain.save(fresh) }
                    complete(refreshed)
                }
            }
        }

        static func find() -> MyAuthentication? { keychain.load() }
    }

    /// Where the app keeps its authentication between launches, one per account.
    struct Keychain: Sendable {
        func save(_ authentication: MyAuthentication) {}
        func load() -> MyAuthentication? { nil }
        func load(account: String) -> MyAuthentication? { nil }
    }

    static let keychain = Keychain()

    static func showLogin() {}

    static func plain() -> RefreshingRequestClosure<MyAuthentication> {
        let authentication = RefreshingRequestClosure<MyAuthentication>()
        return authentication
    }

    static func configured(accountID: String) -> RefreshingRequestClosure<MyAuthentication> {
        var options = RefreshingRequestClosure<MyAuthentication>.Options(refreshTimeout: 10)
        options.origins = .only(URL(string: "https://api.example.com")!)
        options.onEvent = { event in log("\(event)") }
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: options,
            find: { keychain.load(account: accountID) })
        return authentication
    }

    static func send(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) async {
        do {
            let (data, response) = try await authentication.data(for: URLRequest(url: meURL), using: .shared)
            handle(data, response)
        } catch RefreshQueueError.notAuthenticated {
            showLogin()
        } catch {
            show(error)
        }
    }

    static func signOnly(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) async throws {
        let signed = try await authentication.authorize(URLRequest(url: meURL))
        _ = signed
    }

    static func callback(_ authentication: RefreshingRequestClosure<MyAuthentication>, meURL: URL) {
        authentication.authorize(URLRequest(url: meURL)) { result in
            switch result {
            case .success(let signed):
                URLSession.shared.dataTask(with: signed) { data, response, error in
                    // …
                }.resume()
            case .failure(let error):
                show(error)
            }
        }
    }
}
