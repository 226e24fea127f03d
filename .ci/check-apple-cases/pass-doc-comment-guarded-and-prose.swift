import Foundation

/// Unlike `URLSession.data(for:)` or `Task.sleep(for:)` named in prose, code in a fence counts:
///
/// ```swift
/// if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
///     let (data, response) = try await URLSession.shared.data(for: signed)
/// }
/// let (data, response) = try await closure.data(for: request, using: .shared)
/// ```
func sign(_ request: URLRequest) -> URLRequest { request }
