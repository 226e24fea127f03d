import Foundation
import TestSupport
import Testing

@testable import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line tool's login: the browser comes back to a listener on this machine.
@Suite("Loopback redirect receiver", .timeLimit(.minutes(3)))
struct LoopbackRedirectReceiverTests {
    private static func login(_ receiver: LoopbackRedirectReceiver) -> AuthorizationCodeRequest {
        AuthorizationCodeRequest(
            authorizationEndpoint: URL(string: "https://accounts.example.test/authorize")!, clientID: "tool",
            redirectURI: receiver.redirectURI)
    }

    /// One session for every visit: a session per request leaks its threads on Linux.
    private static let session = URLSession(configuration: .ephemeral)

    /// What a browser gets for `url`: status and body.
    private static func visit(_ url: String, method: String = "GET") async throws -> (Int, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        // Generous: under a full test run the global pool may be busy for seconds.
        request.timeoutInterval = 60
        let (data, response) = try await session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func theRedirectURIIsALoopbackIPLiteralWithThePortTheSystemPicked() throws {
        let receiver = try LoopbackRedirectReceiver()
        #expect(receiver.port > 0)
        #expect(receiver.redirectURI == "http://127.0.0.1:\(receiver.port)/callback")
        #expect(!receiver.redirectURI.contains("localhost"))
        let other = try LoopbackRedirectReceiver(path: "/oauth/done")
        #expect(other.redirectURI == "http://127.0.0.1:\(other.port)/oauth/done")
        #expect(other.port != receiver.port)
    }

    @Test(arguments: ["callback", "/callback?x=1", "/call back", "/callback#top", ""])
    func aPathThatCannotBeARedirectPathIsRefused(path: String) {
        #expect(throws: LoopbackRedirectError.invalidPath) { try LoopbackRedirectReceiver(path: path) }
    }

    @Test func theCallbackGivesTheCodeAndThePageSaysTheWindowMayBeClosed() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        // A stray request first (a browser's favicon): 404, and the wait goes on.
        let (faviconStatus, _) = try await Self.visit("http://127.0.0.1:\(receiver.port)/favicon.ico")
        #expect(faviconStatus == 404)
        let (status, page) = try await Self.visit("\(receiver.redirectURI)?code=the-code&state=\(login.state)")
        #expect(status == 200)
        #expect(page.contains("You may close this window"))
        #expect(!page.contains("the-code") && !page.contains(login.state))
        #expect(try await code.value == "the-code")
        // The listener is closed: nothing answers there any more.
        await #expect(throws: (any Error).self) {
            _ = try await Self.visit("\(receiver.redirectURI)?code=again&state=\(login.state)")
        }
    }

    /// A redirect with another state (a page probing loopback ports, an old tab) gets the failure
    /// page, but cannot end the wait: the real redirect still logs in.
    @Test func aRedirectWithAnotherStateFailsItsPageButNotTheLogin() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        let (status, page) = try await Self.visit("\(receiver.redirectURI)?code=forged&state=not-\(login.state)")
        #expect(status == 400)
        #expect(page.contains("did not complete"))
        let (realStatus, _) = try await Self.visit("\(receiver.redirectURI)?code=real&state=\(login.state)")
        #expect(realStatus == 200)
        #expect(try await code.value == "real")
    }

    @Test func closingTheReceiverEndsTheWaitAndAFirstCallAfterItIsRefused() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let waiting = Task { try await receiver.code(for: Self.login(receiver), timeout: 120) }
        try await Task.sleep(nanoseconds: 50_000_000)
        receiver.close()
        // Cancelled while it waited; or refused, should the task have been late to start waiting.
        await #expect {
            try await waiting.value
        } throws: { error in
            error is CancellationError || (error as? LoopbackRedirectError) == .alreadyUsed
        }
        let closed = try LoopbackRedirectReceiver()
        closed.close()
        await #expect(throws: LoopbackRedirectError.alreadyUsed) {
            _ = try await closed.code(for: Self.login(closed), timeout: 1)
        }
    }

    @Test func aDeclinedLoginFailsWithTheServersError() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        _ = try await Self.visit("\(receiver.redirectURI)?error=access_denied&state=\(login.state)")
        await #expect(throws: AuthorizationCodeError.authorizationFailed(error: "access_denied", description: nil)) {
            try await code.value
        }
    }

    @Test func aPostToTheCallbackIsRefusedAndTheWaitGoesOn() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        let (postStatus, _) = try await Self.visit(
            "\(receiver.redirectURI)?code=c&state=\(login.state)", method: "POST")
        #expect(postStatus == 405)
        _ = try await Self.visit("\(receiver.redirectURI)?code=c2&state=\(login.state)")
        #expect(try await code.value == "c2")
    }

    @Test func aRequestHeadLargerThanEightKibibytesIsRefusedAndTheWaitGoesOn() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        var huge = URLRequest(url: URL(string: "\(receiver.redirectURI)?code=c&state=\(login.state)")!)
        huge.setValue(String(repeating: "a", count: 9_000), forHTTPHeaderField: "X-Padding")
        huge.timeoutInterval = 60
        let (_, response) = try await Self.session.data(for: huge)
        #expect((response as? HTTPURLResponse)?.statusCode == 431)
        _ = try await Self.visit("\(receiver.redirectURI)?code=c3&state=\(login.state)")
        #expect(try await code.value == "c3")
    }

    @Test func noRedirectWithinTheTimeoutFails() async throws {
        let receiver = try LoopbackRedirectReceiver()
        await #expect(throws: LoopbackRedirectError.timedOut) {
            _ = try await receiver.code(for: Self.login(receiver), timeout: 0.3)
        }
        await #expect(throws: LoopbackRedirectError.alreadyUsed) {
            _ = try await receiver.code(for: Self.login(receiver), timeout: 0.3)
        }
    }

    @Test func cancellingTheWaitClosesTheListener() async throws {
        let receiver = try LoopbackRedirectReceiver()
        let waiting = Task { try await receiver.code(for: Self.login(receiver), timeout: 30) }
        try await Task.sleep(nanoseconds: 50_000_000)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func anIPv6ReceiverListensOnColonColonOne() async throws {
        let receiver: LoopbackRedirectReceiver
        do {
            receiver = try LoopbackRedirectReceiver(address: .ipv6)
        } catch LoopbackRedirectError.listenFailed {
            return  // no IPv6 loopback on this machine
        }
        #expect(receiver.redirectURI == "http://[::1]:\(receiver.port)/callback")
        let login = Self.login(receiver)
        let code = Task { try await receiver.code(for: login, timeout: 120) }
        // Linux's URLSession does not take an IPv6 literal: a browser of bytes, on a socket.
        let answer = await onAThreadOfItsOwn {
            Self.rawGetOverIPv6(port: receiver.port, target: "/callback?code=six&state=\(login.state)")
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        #expect(try await code.value == "six")
    }

    @Test(
        arguments: [
            (
                "GET /callback?code=c HTTP/1.1\r\nHost: x\r\n\r\n",
                LoopbackCallbackRequest.callback(target: "/callback?code=c")
            ),
            ("GET /callback HTTP/1.0\r\n\r\n", .callback(target: "/callback")),
            ("POST /callback?code=c HTTP/1.1\r\n\r\n", .other(status: 405)),
            ("GET /callbackx HTTP/1.1\r\n\r\n", .other(status: 404)),
            ("GET /callback/more HTTP/1.1\r\n\r\n", .other(status: 404)),
            ("GET /favicon.ico HTTP/1.1\r\n\r\n", .other(status: 404)),
            ("GET http://evil.test/callback HTTP/1.1\r\n\r\n", .other(status: 400)),
            ("GARBAGE\r\n\r\n", .other(status: 400)),
            ("GET /callback SPDY/3\r\n\r\n", .other(status: 400)),
        ] as [(EscapedText, LoopbackCallbackRequest)])
    func aRequestHeadIsReadForItsMethodAndPath(head: EscapedText, expected: LoopbackCallbackRequest) {
        #expect(LoopbackCallbackRequest(head: .complete(Array(head.value.utf8)), path: "/callback") == expected)
    }

    @Test func anUnreadableOrTooLargeHeadIsNoCallback() {
        #expect(LoopbackCallbackRequest(head: .unreadable, path: "/callback") == .unreadable)
        #expect(LoopbackCallbackRequest(head: .tooLarge, path: "/callback") == .other(status: 431))
    }

    /// A head of 8 KiB, its blank line included, is read; one byte more is too large, whether the
    /// blank line comes after the limit or never.
    @Test(arguments: [(8_192, true), (8_193, false)])
    func aRequestHeadOfUpTo8KiBIsRead(size: Int, isRead: Bool) throws {
        var ends: [Int32] = [0, 0]
        #if canImport(Darwin)
        #expect(socketpair(AF_UNIX, SOCK_STREAM, 0, &ends) == 0)
        #else
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        #endif
        defer { for end in ends { close(end) } }
        let start = "GET /callback HTTP/1.1\r\nX-Padding: "
        let head = start + String(repeating: "a", count: size - start.utf8.count - 4) + "\r\n\r\n"
        #expect(head.utf8.count == size)
        let sent = Array(head.utf8).withUnsafeBytes { send(ends[1], $0.baseAddress, $0.count, 0) }
        #expect(sent == size)
        let read = LoopbackListener.readHead(
            ends[0], limit: LoopbackRedirectReceiver.maximumRequestHead, until: .now() + 30, unless: { false })
        #expect(read == (isRead ? .complete(Array(head.utf8)) : .tooLarge))
    }

    /// The answer to `GET target` from [::1]:`port`, as text.
    private static func rawGetOverIPv6(port: UInt16, target: String) -> String {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET6, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        // A receiver that never answers fails the test instead of hanging it.
        var limit = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_addr = in6addr_loopback
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        guard connected == 0 else { return "" }
        _ = LoopbackServer.sendAll(Array("GET \(target) HTTP/1.1\r\nHost: [::1]\r\n\r\n".utf8), to: descriptor)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            answer += buffer[..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
