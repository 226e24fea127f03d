import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value that can build the `URLRequest` it stands for, such as Moya's `Endpoint`.
///
/// Moya's `Endpoint` already has this method; it adopts the protocol in one line:
///
/// ```swift
/// extension Endpoint: @retroactive URLRequestProviding {}
/// ```
public protocol URLRequestProviding {
    /// Builds the request. An error thrown here that already is the provider's error type reaches
    /// it unchanged; any other goes through the request closure's `mapError` first.
    func urlRequest() throws -> URLRequest
}
