import Foundation
import RefreshQueue

/// An authentication held entirely in memory: a token, whether it is stale, and a refresh the
/// benchmark completes itself. Its tokens are random and never printed.
struct FakeAuthentication: RefreshableAuthentication {
    /// A random token, never printed.
    let accessToken: String
    /// Fixed when the authentication is created: stale ones start a refresh.
    let isRefreshNeeded: Bool
    /// Starts and completes refreshes; shared by every generation of one burst.
    let refresher: ManualRefresher

    /// An authentication with a fresh random token.
    init(stale: Bool, refresher: ManualRefresher) {
        accessToken = "fake-" + UUID().uuidString
        isRefreshNeeded = stale
        self.refresher = refresher
    }

    /// The header value that ``RefreshingRequestClosure`` writes for this token with `.bearer`.
    var bearerHeader: String {
        "Bearer " + accessToken
    }

    /// A refresh that stays pending until the benchmark completes it through ``refresher``.
    func refresh() -> Future<FakeAuthentication> {
        refresher.begin()
    }

    /// Unused: the benchmarks pass `find` to the closure.
    static func find() -> FakeAuthentication? {
        nil
    }
}
