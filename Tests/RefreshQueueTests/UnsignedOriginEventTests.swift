import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A mistyped origin must not fail silently: the request that goes out unsigned for it is
/// reported, once per origin, with the allowed origins that match nothing.
@Suite("Requests sent unsigned for their origin", .timeLimit(.minutes(1)))
struct UnsignedOriginEventTests {
    private static func closure(_ origins: AllowedOrigins, events: EventLog) -> Closure {
        let service = TokenService()
        service.store(service.authentication("valid"))
        return Closure(
            options: .init(origins: origins, onEvent: { events.append($0) }), find: service.find)
    }

    private static func unsignedEvents(_ events: EventLog) -> [(String, [String])] {
        events.all.compactMap {
            if case .requestSentUnsigned(let origin, let unusable) = $0 { return (origin, unusable) }
            return nil
        }
    }

    @Test func anOriginWithoutASchemeMatchesNothingAndTheEventSaysSo() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "api.spotify.com")!), events: events)
        for _ in 0..<3 {
            let sent = try await closure.authorize(URLRequest(url: URL(string: "https://api.spotify.com/v1/me")!))
            #expect(sent.value(forHTTPHeaderField: "Authorization") == nil)
        }
        let reported = Self.unsignedEvents(events)
        #expect(reported.count == 1)
        #expect(reported.first?.0 == "https://api.spotify.com:443")
        #expect(reported.first?.1 == ["api.spotify.com"])
        #expect(
            events.descriptions.contains { $0.contains("have no scheme or host") && $0.contains("api.spotify.com") })
    }

    @Test func anHTTPOriginDoesNotCoverHTTPSAndEachOriginIsReportedOnce() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "http://api.example.test")!), events: events)
        for url in ["https://api.example.test/a", "https://api.example.test/b", "https://cdn.example.test/c"] {
            _ = try await closure.authorize(URLRequest(url: URL(string: url)!))
        }
        let reported = Self.unsignedEvents(events)
        #expect(reported.map(\.0) == ["https://api.example.test:443", "https://cdn.example.test:443"])
        #expect(reported.allSatisfy { $0.1.isEmpty })
    }

    @Test func allowedOriginsFilesAndExemptRequestsAreNotReported() async throws {
        let events = EventLog()
        let service = TokenService()
        service.store(service.authentication("valid"))
        let closure = Closure(
            options: .init(
                origins: .only(URL(string: "https://api.example.test")!),
                requiresAuthentication: { $0.url?.path != "/public" }, onEvent: { events.append($0) }),
            find: service.find)
        let signed = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.test/v1/me")!))
        #expect(signed.value(forHTTPHeaderField: "Authorization") == "Bearer valid")
        _ = try await closure.authorize(URLRequest(url: URL(fileURLWithPath: "/tmp/x")))
        _ = try await closure.authorize(URLRequest(url: URL(string: "https://elsewhere.test/public")!))
        #expect(Self.unsignedEvents(events).isEmpty)
    }

    /// `user:password@api.example.test` without a scheme reads as scheme `user`: nothing of it is shown.
    @Test func anEntryWithAnAtSignAndNoHostShowsNothingOfIt() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "user:pw-secret-0123@api.example.test")!), events: events)
        _ = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.test/")!))
        let text = events.descriptions.joined(separator: "\n")
        #expect(text.contains("went out unsigned"))
        #expect(!text.contains("pw-secret-0123"))
    }

    @Test func anUnusableEntryIsShownWithoutItsUserPartOrQuery() async throws {
        let events = EventLog()
        let closure = Self.closure(
            .only(URL(string: "//user:hunter2-secret@/path?key=query-secret")!), events: events)
        _ = try await closure.authorize(URLRequest(url: URL(string: "https://api.example.test/")!))
        let text = events.descriptions.joined(separator: "\n")
        #expect(text.contains("went out unsigned"))
        #expect(!text.contains("hunter2-secret") && !text.contains("query-secret"))
    }

    @Test func atMostSixtyFourOriginsAreReported() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "https://api.example.test")!), events: events)
        for index in 0..<100 {
            _ = try await closure.authorize(URLRequest(url: URL(string: "https://host\(index).example.test/")!))
        }
        #expect(Self.unsignedEvents(events).count == 64)
    }
}
