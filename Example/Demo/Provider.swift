import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A provider with Moya's request-closure contract, small enough to read in a minute. With Moya
// itself, `MoyaProvider(requestClosure: authentication.requestClosure { MoyaError.underlying($0, nil) })`
// takes the place of all of this.

/// The API the app talks to, like a Moya `TargetType`.
enum SpotifyAPI {
    case me
    case playlists

    var path: String {
        switch self {
        case .me: return "v1/me"
        case .playlists: return "v1/me/playlists"
        }
    }
}

/// What a provider turns a target into before sending it, like Moya's `Endpoint`.
struct Endpoint: URLRequestProviding {
    let url: URL
    let method: String

    func urlRequest() throws -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return request
    }
}

/// Errors of the provider, like `MoyaError`.
enum ProviderError: Error, CustomStringConvertible {
    case requestMapping(String)
    case underlying(any Error)

    var description: String {
        switch self {
        case .requestMapping(let reason): return "request mapping: \(reason)"
        case .underlying(let error): return "\(error)"
        }
    }
}

/// What came back for a target, like Moya's `Response`: the status, and the request as it was
/// sent (signed) with the response, which a 401 retry hands to `reauthorize`.
struct ProviderResponse: Sendable {
    let statusCode: Int
    let request: URLRequest
    let response: HTTPURLResponse?
}

/// A provider that sends `SpotifyAPI` targets with `URLSession`.
struct Provider: Sendable {
    typealias RequestResultClosure = (Result<URLRequest, ProviderError>) -> Void
    /// Moya's `RequestClosure`: given an endpoint, produce the request to send, or an error.
    typealias RequestClosure = (Endpoint, @escaping RequestResultClosure) -> Void

    let baseURL: URL
    let session: URLSession
    private let requestClosure: UncheckedRequestClosure

    init(baseURL: URL, session: URLSession, requestClosure: @escaping RequestClosure) {
        self.baseURL = baseURL
        self.session = session
        self.requestClosure = UncheckedRequestClosure(closure: requestClosure)
    }

    /// Sends `target`; `completion` gets the response, or the error that stopped the request.
    func request(
        _ target: SpotifyAPI, completion: @escaping @Sendable (Result<ProviderResponse, ProviderError>) -> Void
    ) {
        let endpoint = Endpoint(url: baseURL.appendingPathComponent(target.path), method: "GET")
        let session = self.session
        // As in Moya: the request closure decides when (and whether) the request goes out.
        requestClosure.closure(endpoint) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let request):
                session.dataTask(with: request) { _, response, error in
                    if let error {
                        completion(.failure(.underlying(error)))
                    } else {
                        let http = response as? HTTPURLResponse
                        completion(
                            .success(
                                ProviderResponse(statusCode: http?.statusCode ?? 0, request: request, response: http)))
                    }
                }.resume()
            }
        }
    }
}

/// Moya's request closure type predates `Sendable`; the provider only calls it, from any thread,
/// as Moya does.
private struct UncheckedRequestClosure: @unchecked Sendable {
    let closure: Provider.RequestClosure
}
