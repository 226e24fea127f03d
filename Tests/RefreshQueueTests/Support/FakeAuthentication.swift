import Foundation
import RefreshQueue
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An authentication whose refreshes are scripted by the `TokenService` it belongs to.
struct FakeAuthentication: RefreshableAuthentication {
    let accessToken: String
    let isRefreshNeeded: Bool
    var isRefreshRecommended = false
    let service: TokenService

    func refresh() -> Future<FakeAuthentication> {
        service.refresh(self)
    }

    /// Tests pass their own `find` to the closure; the static one is never used.
    static func find() -> FakeAuthentication? { nil }
}

/// A fake token endpoint: counts refreshes and finds, and answers as a test tells it to.
final class TokenService: Sendable {
    enum Behavior: Sendable {
        /// Complete at once with a fresh token (`token-<n>`).
        case succeed
        /// Complete at once with this error.
        case fail(any Error)
        /// Keep the refresh pending until the test calls `completePending`.
        case hold
        /// Complete at once with a token that still needs a refresh.
        case stale
        /// Answer with whatever this function returns.
        case custom(@Sendable (FakeAuthentication) -> Future<FakeAuthentication>)
    }

    private struct State {
        var behavior: Behavior
        var refreshes = 0
        var finds = 0
        var pending: [@Sendable (Result<FakeAuthentication, any Error>) -> Void] = []
        var stored: FakeAuthentication?
        var refreshedFrom: [String] = []
    }

    private let state: Protected<State>

    /// Records each call of `refresh()` by its number (1, 2, …) with the token it refreshed.
    let started = Completions<String>()

    init(behavior: Behavior = .succeed) {
        state = Protected(State(behavior: behavior))
    }

    /// An authentication of this service.
    func authentication(_ token: String, stale: Bool = false, recommended: Bool = false) -> FakeAuthentication {
        FakeAuthentication(accessToken: token, isRefreshNeeded: stale, isRefreshRecommended: recommended, service: self)
    }

    /// What `find()` returns from now on.
    func store(_ authentication: FakeAuthentication?) {
        state.withLock { $0.stored = authentication }
    }

    /// A `find` function counting its calls.
    var find: @Sendable () -> FakeAuthentication? {
        { [self] in
            self.state.withLock { state in
                state.finds += 1
                return state.stored
            }
        }
    }

    func setBehavior(_ behavior: Behavior) {
        state.withLock { $0.behavior = behavior }
    }

    var refreshCount: Int { state.withLock { $0.refreshes } }
    var findCount: Int { state.withLock { $0.finds } }
    var pendingCount: Int { state.withLock { $0.pending.count } }
    var refreshedFrom: [String] { state.withLock { $0.refreshedFrom } }

    /// Completes every held refresh with a fresh token (or `result`).
    func completePending(with result: Result<FakeAuthentication, any Error>? = nil) {
        let (pending, number) = state.withLock { state in
            defer { state.pending.removeAll() }
            return (state.pending, state.refreshes)
        }
        for complete in pending {
            complete(result ?? .success(authentication("token-\(number)")))
        }
    }

    /// Completes the oldest held refresh only, with `result`.
    func completeOldest(with result: Result<FakeAuthentication, any Error>) {
        let oldest = state.withLock { state in state.pending.isEmpty ? nil : state.pending.removeFirst() }
        oldest?(result)
    }

    func refresh(_ old: FakeAuthentication) -> Future<FakeAuthentication> {
        let (behavior, number) = state.withLock { state in
            state.refreshes += 1
            state.refreshedFrom.append(old.accessToken)
            return (state.behavior, state.refreshes)
        }
        defer { started.record(number, old.accessToken) }
        switch behavior {
        case .succeed:
            return Future(value: authentication("token-\(number)"))
        case .fail(let error):
            return Future(error: error)
        case .stale:
            return Future(value: authentication("token-\(number)", stale: true))
        case .custom(let refresh):
            return refresh(old)
        case .hold:
            return Future { complete in
                state.withLock { $0.pending.append(complete) }
            }
        }
    }
}

/// A manually advanced clock for refresh windows.
final class ManualClock: Sendable {
    private let time = Protected<TimeInterval>(1000)

    var now: @Sendable () -> TimeInterval { { [time] in time.current } }

    func advance(by seconds: TimeInterval) {
        time.withLock { $0 += seconds }
    }
}

struct ExampleError: Error, Equatable {
    let code: Int
}

/// A request to a fixed test URL, with an optional header.
func makeRequest(_ path: String = "/v1/me", headers: [String: String] = [:]) -> URLRequest {
    var request = URLRequest(url: URL(string: "https://api.example.test\(path)")!)
    for (name, value) in headers {
        request.setValue(value, forHTTPHeaderField: name)
    }
    return request
}
