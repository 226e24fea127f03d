import Foundation
import os

@available(iOS 15, macOS 12, tvOS 15, watchOS 8, *)
extension URLSession {
    func body(of request: URLRequest) async throws -> Data {
        try await data(for: request).0
    }

    func stamped() -> String {
        Date.now.formatted(date: .numeric, time: .standard)
    }
}

struct Loader {
    @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
    func pause() async throws {
        try await Task.sleep(for: .seconds(1))
        let lock = OSAllocatedUnfairLock(initialState: 0)
        lock.withLock { $0 += 1 }
    }

    @available(iOS, introduced: 14)
    @available(macOS, introduced: 11)
    @available(tvOS, introduced: 14)
    @available(watchOS, introduced: 7)
    var log: Logger { Logger(subsystem: "RefreshQueue", category: "refresh") }
}
