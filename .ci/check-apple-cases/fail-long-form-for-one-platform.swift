// expect: reachable on macOS 10.15, tvOS 13, watchOS 6
// The long form names one platform; the others keep their minimum.
import Foundation

@available(iOS, introduced: 15)
func load(_ request: URLRequest) async throws -> Data {
    try await URLSession.shared.data(for: request).0
}
