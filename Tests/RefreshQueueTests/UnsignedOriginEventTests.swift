import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A mistyped origin must not fail silently: the request that goes out unsigned for it is
/// reported, once per origin.
@Suite("Requests sent unsigned for their origin", .timeLimit(.minutes(1)))
struct UnsignedOriginEventTests {
    private static func closure(_ origins: AllowedOrigins, events: EventLog) -> Closure {
        let service = TokenService()
        service.store(service.authentication("valid"))
        return Closure(
            options: .init(origins: origins, onEvent: { events.append($0) }), find: service.find)
    }

    private static func unsignedEvents(_ events: EventLog) -> [String] {
        events.all.compactMap {
            if case .requestSentUnsigned(let origin) = $0 { return origin }
            return nil
        }
    }

    @Test func anHTTPOriginDoesNotCoverHTTPSAndEachOriginIsReportedOnce() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "http://api.example.test")!), events: events)
        for url in ["https://api.example.test/a", "https://api.example.test/b", "https://cdn.example.test/c"] {
            _ = try await closure.authorize(URLRequest(url: URL(string: url)!))
        }
        let reported = Self.unsignedEvents(events)
        #expect(reported == ["https://api.example.test:443", "https://cdn.example.test:443"])
        #expect(
            events.descriptions.contains(
                "a request to https://cdn.example.test:443 went out unsigned: its origin is not allowed"))
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

    @Test func atMostSixtyFourOriginsAreReported() async throws {
        let events = EventLog()
        let closure = Self.closure(.only(URL(string: "https://api.example.test")!), events: events)
        for index in 0..<100 {
            _ = try await closure.authorize(URLRequest(url: URL(string: "https://host\(index).example.test/")!))
        }
        #expect(Self.unsignedEvents(events).count == 64)
    }
}
