import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

typealias Closure = RefreshingRequestClosure<FakeAuthentication>

extension RefreshingRequestClosure where Authentication == FakeAuthentication {
    /// A closure reading from `service`, with events collected into `events` when given.
    static func make(
        _ service: TokenService,
        refreshTimeout: TimeInterval = 30,
        abandonAfter: TimeInterval? = nil,
        refreshWindow: RefreshWindow = .default,
        scheme: AuthorizationScheme = .bearer,
        missingAuthentication: MissingAuthenticationPolicy = .fail,
        requiresAuthentication: @escaping @Sendable (URLRequest) -> Bool = { _ in true },
        events: EventLog? = nil,
        clock: ManualClock? = nil
    ) -> Closure {
        let onEvent: (@Sendable (RefreshEvent) -> Void)?
        if let events {
            onEvent = { event in events.append(event) }
        } else {
            onEvent = nil
        }
        var now: @Sendable () -> TimeInterval = { ProcessInfo.processInfo.systemUptime }
        if let clock { now = clock.now }
        return Closure(
            options: .init(
                refreshTimeout: refreshTimeout,
                abandonAfter: abandonAfter,
                refreshWindow: refreshWindow,
                scheme: scheme,
                missingAuthentication: missingAuthentication,
                requiresAuthentication: requiresAuthentication,
                onEvent: onEvent,
                clock: now
            ),
            find: service.find
        )
    }

    /// Authorizes `requests` copies of `request` from many threads at once, recording each result.
    func authorizeConcurrently(
        _ count: Int,
        _ request: URLRequest = makeRequest(),
        into completions: Completions<Result<URLRequest, any Error>>
    ) {
        DispatchQueue.concurrentPerform(iterations: count) { index in
            authorize(request) { completions.record(index, $0) }
        }
    }
}

/// Events a closure emitted, in order; a test can await one.
final class EventLog: Sendable {
    private struct State {
        var events: [RefreshEvent] = []
        var waiters: [(prefix: String, count: Int, continuation: CheckedContinuation<Bool, Never>)] = []

        func count(_ prefix: String) -> Int {
            events.lazy.filter { $0.description.hasPrefix(prefix) }.count
        }
    }

    private let state = Protected(State())

    func append(_ event: RefreshEvent) {
        let ready = state.withLock { state in
            state.events.append(event)
            var ready: [CheckedContinuation<Bool, Never>] = []
            var waiting = state.waiters
            waiting.removeAll { waiter in
                guard state.count(waiter.prefix) >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            state.waiters = waiting
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    var all: [RefreshEvent] { state.withLock { $0.events } }
    var descriptions: [String] { all.map(\.description) }

    /// How many events so far have a description starting with `prefix`.
    func count(_ prefix: String) -> Int {
        state.withLock { $0.count(prefix) }
    }

    /// Waits until `count` events whose description starts with `prefix` have been emitted; fails
    /// the test after `timeout` seconds.
    func wait(forEventStartingWith prefix: String, count: Int = 1, timeout: TimeInterval = 60) async {
        let seen = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let already = self.state.withLock { state -> Bool in
                        if state.count(prefix) >= count { return true }
                        state.waiters.append((prefix, count, continuation))
                        return false
                    }
                    if already { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return false
            }
            let first = await group.next() ?? false
            if !first {
                let waiting = self.state.withLock { state in
                    defer { state.waiters.removeAll { $0.prefix == prefix } }
                    return state.waiters.filter { $0.prefix == prefix }.map(\.continuation)
                }
                for continuation in waiting { continuation.resume(returning: false) }
            }
            group.cancelAll()
            return first
        }
        #expect(seen, "not \(count) events \"\(prefix)…\" in \(timeout) s")
    }
}

extension Result where Success == URLRequest {
    /// The `Authorization` header of a signed request, or nil.
    var authorization: String? {
        (try? get())?.value(forHTTPHeaderField: "Authorization")
    }

    /// The error of a failed result, or nil.
    var failure: (any Error)? {
        guard case .failure(let error) = self else { return nil }
        return error
    }

    /// The `RefreshQueueError` a failed result carries, or nil.
    var refreshQueueError: RefreshQueueError? {
        guard case .failure(let error) = self else { return nil }
        return error as? RefreshQueueError
    }
}

extension RefreshQueueError {
    /// The case name alone, for comparisons in tests.
    var name: String {
        switch self {
        case .notAuthenticated: return "notAuthenticated"
        case .refreshTimedOut: return "refreshTimedOut"
        case .invalidToken: return "invalidToken"
        case .refreshFailed: return "refreshFailed"
        case .excessiveRefresh: return "excessiveRefresh"
        case .cancelled: return "cancelled"
        case .invalidConfiguration: return "invalidConfiguration"
        case .insecureRequest: return "insecureRequest"
        case .authenticationUnreadable: return "authenticationUnreadable"
        }
    }
}

/// A stale token whose first refresh behaves as `failing` (and fails the request with an error
/// that `expected` accepts), then whose next refresh succeeds and signs the next request.
func expectAFailedRefreshThenARecovery(
    failingWith failing: TokenService.Behavior, expected: @escaping (any Error) -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let service = TokenService(behavior: failing)
    service.store(service.authentication("expired", stale: true))
    let closure = Closure.make(service)
    await #expect(sourceLocation: sourceLocation) {
        try await closure.authorize(makeRequest())
    } throws: { error in
        expected(error)
    }
    service.setBehavior(.succeed)
    let signed = try await closure.authorize(makeRequest())
    #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer token-2", sourceLocation: sourceLocation)
}

extension RefreshingRequestClosure where Authentication == FakeAuthentication {
    /// Whether a request sent now completes before `authorize` returns, signed with `header`.
    func signsAtOnce(with header: String) -> Bool {
        let signed = Protected(false)
        authorize(makeRequest()) { result in
            let value = (try? result.get())?.value(forHTTPHeaderField: "Authorization")
            signed.withLock { $0 = value == header }
        }
        return signed.current
    }
}
