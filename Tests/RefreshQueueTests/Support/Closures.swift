import Foundation
import RefreshQueue
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

typealias Closure = RefreshingRequestClosure<FakeAuthentication>

extension RefreshingRequestClosure where Authentication == FakeAuthentication {
    /// A closure reading from `service`, with events collected into `events` when given.
    static func make(
        _ service: TokenService,
        refreshTimeout: TimeInterval = 30,
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
            refreshTimeout: refreshTimeout,
            refreshWindow: refreshWindow,
            scheme: scheme,
            missingAuthentication: missingAuthentication,
            requiresAuthentication: requiresAuthentication,
            find: service.find,
            onEvent: onEvent,
            clock: now
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

/// Events a closure emitted, in order.
final class EventLog: Sendable {
    private let events = Protected<[RefreshEvent]>([])

    func append(_ event: RefreshEvent) {
        events.withLock { $0.append(event) }
    }

    var all: [RefreshEvent] { events.current }
    var descriptions: [String] { all.map(\.description) }
}

extension Result where Success == URLRequest {
    /// The `Authorization` header of a signed request, or nil.
    var authorization: String? {
        (try? get())?.value(forHTTPHeaderField: "Authorization")
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
        }
    }
}
