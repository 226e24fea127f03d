// expect: in a doc comment's code
import Foundation

/// Signs a request. An app then sends it:
///
/// ```swift
/// let (data, response) = try await URLSession.shared.data(for: signed)
/// ```
func sign(_ request: URLRequest) -> URLRequest { request }
