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
            case .failure(.underlying(let error as any RefreshFailure, _)) where error.requiresReauthentication:
                showLogin()  // nobody is logged in, or the server refused the refresh token (invalid_grant)
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

final class RefreshQueueInterceptor: RequestInterceptor {
    let authentication: RefreshingRequestClosure<MyAuthentication>

    init(authentication: RefreshingRequestClosure<MyAuthentication>) {
        self.authentication = authentication
    }

    func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        authentication.authorize(urlRequest, completion: completion)
    }

    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard request.retryCount == 0, let rejected = request.request, let response = request.response,
            response.statusCode == 401
        else { return completion(.doNotRetry) }
        authentication.reauthorize(rejected, response: response) { outcome in
            switch outcome {
            case .success: completion(.retry)  // adapt signs the retry with the token held now
            case .failure(let error): completion(.doNotRetryWithError(error))
            }
        }
    }
}

/// The app's client of the API: it may be used from any thread, as MoyaProvider may.
final class SpotifyClient: @unchecked Sendable {
    let provider: MoyaProvider<SpotifyAPI>
    let authentication: RefreshingRequestClosure<MyAuthentication>

    init(provider: MoyaProvider<SpotifyAPI>, authentication: RefreshingRequestClosure<MyAuthentication>) {
        self.provider = provider
        self.authentication = authentication
    }

    func requestMe(
        retryingAfter401: Bool = true, completion: @escaping @Sendable (Result<Response, MoyaError>) -> Void
    ) {
        provider.request(.me) { result in
            if case .success(let response) = result, response.statusCode == 401, retryingAfter401,
                let rejected = response.request
            {
                self.authentication.reauthorize(rejected, response: response.response) { outcome in
                    switch outcome {
                    case .success: self.requestMe(retryingAfter401: false, completion: completion)
                    case .failure(let error): completion(.failure(.underlying(error, response)))
                    }
                }
                return
            }
            completion(result)
        }
    }
}
