import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stands in for Moya's `Endpoint`: builds a request or fails to.
struct FakeEndpoint: URLRequestProviding {
    let path: String
    var buildError: (any Error)?

    func urlRequest() throws -> URLRequest {
        if let buildError { throw buildError }
        return makeRequest(path)
    }
}

/// Stands in for `MoyaError`.
enum ProviderError: Error {
    case requestMapping(String)
    case underlying(any Error)
}

@Suite("Moya-shaped request closure", .timeLimit(.minutes(2)))
struct RequestClosureTests {
    typealias Results = Completions<Result<URLRequest, ProviderError>>

    @Test func itSignsTheRequestTheEndpointBuilds() async {
        let service = TokenService()
        service.store(service.authentication("moya"))
        let closure = Closure.make(service)
        let requestClosure: (FakeEndpoint, @escaping (Result<URLRequest, ProviderError>) -> Void) -> Void =
            closure.requestClosure { ProviderError.underlying($0) }
        let results = Results()
        requestClosure(FakeEndpoint(path: "/v1/me")) { results.record(0, $0) }
        await results.wait(for: 1)
        #expect((try? results.results[0]?.get())?.value(forHTTPHeaderField: "Authorization") == "Bearer moya")
    }

    @Test func errorsFromBuildingTheRequestPassThroughUnchanged() async {
        let service = TokenService()
        service.store(service.authentication("moya"))
        let requestClosure: (FakeEndpoint, @escaping (Result<URLRequest, ProviderError>) -> Void) -> Void =
            Closure.make(service).requestClosure { ProviderError.underlying($0) }
        let results = Results()
        requestClosure(FakeEndpoint(path: "/", buildError: ProviderError.requestMapping("bad url"))) {
            results.record(0, $0)
        }
        await results.wait(for: 1)
        guard case .failure(.requestMapping(let message)) = results.results[0] else {
            Issue.record("expected requestMapping, got \(String(describing: results.results[0]))")
            return
        }
        #expect(message == "bad url")
        #expect(service.findCount == 0)
    }

    /// The error that `done` received inside `.underlying` for a request through a closure on
    /// `service`; records an issue and returns `nil` when it received anything else.
    private func underlyingError(through service: TokenService) async -> (any Error)? {
        let requestClosure: (FakeEndpoint, @escaping (Result<URLRequest, ProviderError>) -> Void) -> Void =
            Closure.make(service).requestClosure { ProviderError.underlying($0) }
        let results = Results()
        requestClosure(FakeEndpoint(path: "/v1/me")) { results.record(0, $0) }
        await results.wait(for: 1)
        guard case .failure(.underlying(let error)) = results.results[0] else {
            Issue.record("expected underlying, got \(String(describing: results.results[0]))")
            return nil
        }
        return error
    }

    @Test func authenticationErrorsAreMappedIntoTheProvidersErrorType() async {
        let error = await underlyingError(through: TokenService())
        #expect((error as? RefreshQueueError) == .notAuthenticated)
    }

    /// A refresh that failed with an error of the provider's type (through a token provider of
    /// its own, say) goes through `mapError` too: passed on bare, it read as the API's own answer,
    /// and a `.underlying` branch that shows the login never matched.
    @Test func aRefreshErrorOfTheProvidersTypeIsMappedToo() async {
        let service = TokenService(behavior: .fail(ProviderError.requestMapping("token endpoint said 400")))
        service.store(service.authentication("expired", stale: true))
        guard let error = await underlyingError(through: service) else { return }
        guard case .requestMapping(let message) = error as? ProviderError else {
            Issue.record("expected the refresh's error inside, got \(error)")
            return
        }
        #expect(message == "token endpoint said 400")
    }

    @Test func theUntypedFormPassesErrorsAsTheyAre() async {
        let service = TokenService()
        let requestClosure: (FakeEndpoint, @escaping (Result<URLRequest, any Error>) -> Void) -> Void =
            Closure.make(service).requestClosure()
        let results = Completions<Result<URLRequest, any Error>>()
        requestClosure(FakeEndpoint(path: "/v1/me", buildError: ExampleError(code: 3))) { results.record(0, $0) }
        await results.wait(for: 1)
        guard case .failure(let error) = results.results[0] else {
            Issue.record("expected a failure")
            return
        }
        #expect(error as? ExampleError == ExampleError(code: 3))
    }
}
