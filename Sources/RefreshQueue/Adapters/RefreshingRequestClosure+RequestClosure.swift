import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// A request closure in Moya's shape, `(Endpoint, @escaping (Result<URLRequest, Failure>) -> Void) -> Void`,
    /// that signs every request a provider sends.
    ///
    /// ```swift
    /// extension Endpoint: URLRequestProviding {}
    ///
    /// let authentication = RefreshingRequestClosure<SpotifyAuthentication>()
    /// let provider = MoyaProvider<SpotifyAPI>(
    ///     requestClosure: authentication.requestClosure { error in MoyaError.underlying(error, nil) }
    /// )
    /// ```
    ///
    /// An error thrown by `endpoint.urlRequest()` that already is a `Failure` (Moya's
    /// `MoyaError.requestMapping`, `.parameterEncoding`, …) reaches `done` unchanged; any other
    /// error, including every ``RefreshQueueError``, goes through `mapError` first.
    ///
    /// `done` is called exactly once: at once when the request can be signed without waiting,
    /// otherwise from the closure's queue or the thread that ended the refresh, as Moya allows.
    ///
    /// - Parameter mapError: Wraps errors into the provider's error type.
    public func requestClosure<Endpoint: URLRequestProviding, Failure: Error>(
        mapError: @escaping @Sendable (any Error) -> Failure
    ) -> (Endpoint, @escaping (Result<URLRequest, Failure>) -> Void) -> Void {
        { endpoint, done in
            let request: URLRequest
            do {
                request = try endpoint.urlRequest()
            } catch {
                done(.failure((error as? Failure) ?? mapError(error)))
                return
            }
            let done = UncheckedSendable(done)
            self.authorize(request) { result in
                done.value(result.mapError { ($0 as? Failure) ?? mapError($0) })
            }
        }
    }

    /// A request closure in Moya's shape whose errors stay `any Error`.
    ///
    /// For providers of your own that accept `Result<URLRequest, any Error>`. Errors thrown by
    /// `endpoint.urlRequest()` pass through unchanged.
    public func requestClosure<Endpoint: URLRequestProviding>()
        -> (Endpoint, @escaping (Result<URLRequest, any Error>) -> Void) -> Void
    {
        requestClosure(mapError: { $0 })
    }
}
