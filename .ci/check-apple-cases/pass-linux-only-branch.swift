// Code that no Apple platform compiles is not checked for availability.
import Foundation

#if os(Linux)
import Synchronization

let shared = Mutex(0)

func load(_ request: URLRequest) async throws -> Data {
    try await Task.sleep(for: .seconds(1))
    return try await URLSession.shared.data(for: request).0
}
#elseif canImport(Glibc) || canImport(Musl)
let now = Date.now
#else
func load(_ request: URLRequest) async throws -> Data? {
    if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
        return try await URLSession.shared.data(for: request).0
    }
    return nil
}
#endif

#if !canImport(Darwin) && canImport(Synchronization)
let counter = Atomic<Int>(0)
#endif
