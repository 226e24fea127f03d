import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RefreshingRequestClosure {
    /// A request closure in Moya's shape, `(Endpoint, @escaping (Result<URLRequest, Failure>) -> Void) -> Void`,
    /// that signs every request a provider sends.
    ///
    /// ```swift
    /// extension Endpoint: @retroactive URLRequestProviding {}
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
    /// `done` is called exactly once: on ``Options/completionQueue`` when the options name one;
    /// otherwise at once, on the caller's thread, when the request is signed without waiting or
    /// refused before any refresh, and later from a thread of the closure's (its queue, its timer
    /// queue when the wait timed out, or the thread where the refresh ended) or the thread
    /// delivering other completions at that moment, one at a time in arrival order (Moya hops to
    /// its `callbackQueue` only for network answers, so set `completionQueue` to it when your
    /// failure handling expects that queue). Do not combine it with Moya's `AccessTokenPlugin`,
    /// which adds a second `Authorization` value.
    ///
    /// - Parameter mapError: Wraps errors into the provider's error type.
    public func requestClosure<Endpoint: URLRequestProviding, Failure: Error>(
        mapError: @escaping @Sendable (any Error) -> Failure
    ) -> (Endpoint, @escaping (Result<URLRequest, Failure>) -> Void) -> Void {
        { endpoint, done in
            let done = UncheckedSendable(done)
            let complete = self.delivering { (result: Result<URLRequest, any Error>) in
                done.value(
                    result.mapError { error in
                        // Only the endpoint's own error may already be the provider's: a refresh's
                        // error of that type (a token provider's `MoyaError`) is wrapped like any.
                        guard let thrown = error as? EndpointError else { return mapError(error) }
                        return (thrown.error as? Failure) ?? mapError(thrown.error)
                    })
            }
            let request: URLRequest
            do {
                request = try endpoint.urlRequest()
            } catch {
                complete(.failure(EndpointError(error: error)))
                return
            }
            self.startAuthorizing(request, completion: complete)
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

/// An error thrown by `endpoint.urlRequest()`, told apart from the errors of signing on its way
/// to `done`.
private struct EndpointError: Error {
    let error: any Error
}
