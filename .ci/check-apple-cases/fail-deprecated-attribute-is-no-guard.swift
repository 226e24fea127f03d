// expect: URLSession's async
// `@available(*, deprecated)` says nothing about versions.
import Foundation

@available(*, deprecated, message: "use load(_:) instead")
func legacyLoad(_ url: URL) async throws -> Data {
    try await URLSession.shared.data(from: url).0
}
