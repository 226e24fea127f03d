// What the article snippets assume exists in an app: a token client, a place to keep the
// authentication, a few URLs and helpers, and Moya's shapes. None of it is part of RefreshQueue.

import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - An app's token client and storage

/// What an app's own token endpoint answers to a refresh.
struct RefreshResponse: Sendable {
    let accessToken: String
    let refreshToken: String?
    let expiresIn: TimeInterval
}

/// An app's own client for its token endpoint, in callback and async form. It never answers
/// here: the snippets are compiled, not run.
struct AppTokenClient: Sendable {
    func refresh(
        using refreshToken: String, completion: @escaping @Sendable (Result<RefreshResponse, any Error>) -> Void
    ) {
        completion(.failure(URLError(.notConnectedToInternet)))
    }

    func refresh(using refreshToken: String) async throws -> RefreshResponse {
        throw URLError(.notConnectedToInternet)
    }
}

/// Where an app keeps its authentication between launches.
struct AppTokenStore: Sendable {
    func save(_ authentication: MyAuthentication) {}
    func load() -> MyAuthentication? { nil }
}

let tokenClient = AppTokenClient()
let tokenStore = AppTokenStore()

// MARK: - Helpers of the Future examples

struct Profile: Sendable {
    let displayName: String
}

func loadProfile() -> Future<Profile> {
    Future(value: Profile(displayName: "Ada"))
}

func greet(_ name: String) -> Future<String> {
    Future(value: "Hello, \(name)")
}

func show(_ greeting: String) {}
func show(_ error: any Error) {}
func handle(_ data: Data, _ response: URLResponse) {}
func log(_ message: String) {}

// MARK: - Moya's shapes

// Stand-ins with the shapes of Moya's types (Moya 15), so that the RefreshQueue side of the Moya
// snippets compiles without Moya. Only what the snippets touch is declared.

protocol TargetType {}

enum SpotifyAPI: TargetType {
    case me
}

/// Moya's `Endpoint` has this method already; the app adopts the protocol with
/// `extension Endpoint: @retroactive URLRequestProviding {}`.
final class Endpoint: URLRequestProviding {
    let url: URL

    init(url: URL) {
        self.url = url
    }

    func urlRequest() throws -> URLRequest {
        URLRequest(url: url)
    }
}

/// Moya's `Response`: the status code, and the request and answer it came from.
final class Response: Sendable {
    let statusCode: Int
    let request: URLRequest?
    let response: HTTPURLResponse?

    init(statusCode: Int, request: URLRequest?, response: HTTPURLResponse?) {
        self.statusCode = statusCode
        self.request = request
        self.response = response
    }
}

// MARK: - Alamofire's shapes (Alamofire 5.10)

/// Alamofire's `Session`: only its place in the interceptor's methods.
final class Session: Sendable {}

/// Alamofire's `Request`: what the retrier reads of it.
class Request: @unchecked Sendable {
    /// How many times it was retried.
    var retryCount: Int { 0 }
    /// The last request sent, as adapted.
    var request: URLRequest? { nil }
    /// The last answer.
    var response: HTTPURLResponse? { nil }
}

/// Alamofire's `RetryResult`.
enum RetryResult: Sendable {
    case retry
    case retryWithDelay(TimeInterval)
    case doNotRetry
    case doNotRetryWithError(any Error)
}

/// Alamofire's `RequestAdapter`.
protocol RequestAdapter: Sendable {
    func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)
}

/// Alamofire's `RequestRetrier`.
protocol RequestRetrier: Sendable {
    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void)
}

/// Alamofire's `RequestInterceptor`.
protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

enum MoyaError: Error {
    case requestMapping(String)
    case underlying(any Error, Response?)
}

final class MoyaProvider<Target: TargetType> {
    typealias RequestResultClosure = (Result<URLRequest, MoyaError>) -> Void
    typealias RequestClosure = (Endpoint, @escaping RequestResultClosure) -> Void

    let requestClosure: RequestClosure

    init(requestClosure: @escaping RequestClosure) {
        self.requestClosure = requestClosure
    }
}
