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
    /// Builds the request. Errors thrown here reach the provider unchanged.
    func urlRequest() throws -> URLRequest
}
