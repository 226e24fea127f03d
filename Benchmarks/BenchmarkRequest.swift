import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The completion handler every scenario and baseline calls.
typealias Completion = @Sendable (Result<URLRequest, any Error>) -> Void

/// The request that scenarios and baselines sign: the same URL and the same one `Accept` header
/// everywhere, so that each comparison mutates an equivalent request.
enum BenchmarkRequest {
    /// The header the token goes into.
    static let authorizationHeader = "Authorization"

    /// `https://api.example.com/v1/me`.
    static func baseURL() throws -> URL {
        guard let url = URL(string: "https://api.example.com/v1/me") else {
            throw BenchmarkError("the benchmark URL does not parse")
        }
        return url
    }

    /// A request for `url` with `Accept: application/json`, as an app would build it.
    static func make(url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return request
    }

    /// The request for ``baseURL()``.
    static func make() throws -> URLRequest {
        make(url: try baseURL())
    }

    /// Signs like a typical interceptor does, for the baselines: `setValue(_:forHTTPHeaderField:)`.
    @inline(__always)
    static func setValueSigned(_ request: URLRequest, header: String) -> URLRequest {
        var signed = request
        signed.setValue(header, forHTTPHeaderField: authorizationHeader)
        return signed
    }

    /// A fresh copy with the header merged into `allHTTPHeaderFields`: the mutation the library
    /// makes, without the library, for the floor of the loopback scenario.
    static func mergeSigned(_ request: URLRequest, header: String) -> URLRequest {
        var signed = request
        var fields = signed.allHTTPHeaderFields ?? [:]
        fields[authorizationHeader] = header
        signed.allHTTPHeaderFields = fields
        return signed
    }

    /// Checks that `signed` carries `header` and still has the `Accept` header of the base request.
    static func verify(_ signed: URLRequest, header: String) throws {
        let fields = signed.allHTTPHeaderFields ?? [:]
        let authorizations = fields.keys.filter { $0.lowercased() == "authorization" }
        guard authorizations.count == 1, signed.value(forHTTPHeaderField: authorizationHeader) == header else {
            throw BenchmarkError("a signed request does not carry exactly one expected Authorization header")
        }
        guard signed.value(forHTTPHeaderField: "Accept") == "application/json" else {
            throw BenchmarkError("signing lost the Accept header")
        }
    }
}
