// The Swift snippets of Moya.md, verbatim, against the Moya stand-ins of Support.swift and
// SupportA.swift.

import Dispatch
import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum MoyaSnippets {
    static func showLogin() {}
    static func handle(_ response: Response) {}

    static func provider() -> MoyaProvider<SpotifyAPI> {
        let authentication = RefreshingRequestClosure<MyAuthentication>()
        let provider = MoyaProvider<SpotifyAPI>(
            requestClosure: authentication.requestClosure { error in MoyaError.underlying(error, nil) })
        return provider
    }

    static func failures(_ provider: MoyaProvider<SpotifyAPI>) {
        provider.request(.me) { result in
            switch result {
            case .success(let response):
                handle(response)
            case .failure(.underlying(RefreshQueueError.notAuthenticated, _)):
                showLogin()
            case .failure(let error):
                show(error)
            }
        }
    }

    static func oneQueue() -> MoyaProvider<SpotifyAPI> {
        let callbackQueue = DispatchQueue(label: "api-callbacks")
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: .init(completionQueue: callbackQueue))
        let provider = MoyaProvider<SpotifyAPI>(
            requestClosure: authentication.requestClosure { error in MoyaError.underlying(error, nil) },
            callbackQueue: callbackQueue)
        return provider
    }

    static func mainQueue() -> RefreshingRequestClosure<MyAuthentication> {
        // A provider created without a callbackQueue delivers its answers on the main queue.
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: .init(completionQueue: .main))
        return authentication
    }

    static func cancelling(_ provider: MoyaProvider<SpotifyAPI>) {
        let cancellable = provider.request(.me) { result in
            // …
        }
        cancellable.cancel()
    }

    static func task(_ authentication: RefreshingRequestClosure<MyAuthentication>) {
        _Concurrency.Task {
            try await authentication.refreshIfNeeded()
        }
    }

    static func tokenRequestExempt() -> RefreshingRequestClosure<MyAuthentication> {
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: .init(requiresAuthentication: { request in request.url?.path != "/api/token" }))
        return authentication
    }

    static func apiOnly() -> RefreshingRequestClosure<MyAuthentication> {
        let authentication = RefreshingRequestClosure<MyAuthentication>(
            options: .init(origins: .only(URL(string: "https://api.spotify.com")!)))
        return authentication
    }
}
