import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives the redirect that ends a login, for a command-line tool, a daemon or a desktop app
/// (RFC 8252 §7.3): a listener on this machine's loopback address, on a port the system picks.
///
/// Register a redirect URI without a port (`http://127.0.0.1/callback`) where the authorization
/// server allows any port for it, as Spotify does; the address is an IP literal, never
/// `localhost`, which a server may refuse and a resolver may send elsewhere.
///
/// ```swift
/// let receiver = try LoopbackRedirectReceiver()
/// let login = AuthorizationCodeRequest(
///     authorizationEndpoint: authorizeURL, clientID: "my-tool", redirectURI: receiver.redirectURI,
///     scope: "user-read-private")
/// print("Log in at \(login.url)")
/// let code = try await receiver.code(for: login)
/// let token = try await client.exchange(code: code, for: login)
/// ```
///
/// It answers exactly one `GET` of its callback path that carries the login's `state`: with a
/// short page telling the user that the window may be closed, and the code (or why there is
/// none, an ``AuthorizationCodeError`` such as `access_denied`) goes to the caller. A redirect
/// with another `state` gets a page saying the login did not complete, and the wait goes on, so
/// that no other page can end it; anything else gets an error status: 404 for another path,
/// 405 for another method, 400 for a request that is not HTTP, 431 for a head larger than 8 KiB. Connections are served one at a time, and one that sends no request within
/// 10 seconds is dropped. Then the listener closes. One receiver serves one login.
public final class LoopbackRedirectReceiver: Sendable {
    /// The loopback address to listen on.
    public enum Address: Sendable {
        /// `127.0.0.1`.
        case ipv4
        /// `[::1]`.
        case ipv6
    }

    /// The redirect URI to give the ``AuthorizationCodeRequest``:
    /// `http://127.0.0.1:<port>/callback`, say.
    public let redirectURI: String
    /// The port the system picked.
    public let port: UInt16
    /// The path the browser is sent back to.
    let path: String
    /// `http://127.0.0.1:<port>`: the redirect URI without its path.
    private let origin: String
    private let listener: Int32
    /// Whether the listener is being waited on, and whether it is closed.
    private let state = Locked(ListenerState.ready)

    private enum ListenerState {
        case ready
        case waiting
        case closed
    }

    /// The most a request's head may take.
    static let maximumRequestHead = 8 * 1024
    /// How long an accepted connection may take to send its request.
    static let connectionDeadline: TimeInterval = 10

    /// Starts listening on `address`, on a port the system picks.
    ///
    /// - Parameters:
    ///   - address: `127.0.0.1` (the default) or `[::1]`.
    ///   - path: The callback path of the redirect URI, `/callback` by default.
    /// - Throws: ``LoopbackRedirectError/listenFailed(errno:)`` when no socket could be bound, and
    ///   ``LoopbackRedirectError/invalidPath`` for a path that does not start with `/` or holds
    ///   a query, a fragment or a space.
    public init(address: Address = .ipv4, path: String = "/callback") throws {
        guard path.hasPrefix("/"), !path.contains(where: { "?# \t\r\n".contains($0) }) else {
            throw LoopbackRedirectError.invalidPath
        }
        self.path = path
        (listener, port) = try LoopbackListener.open(address)
        let host = address == .ipv4 ? "127.0.0.1" : "[::1]"
        origin = "http://\(host):\(port)"
        redirectURI = origin + path
    }

    deinit {
        close()
    }

    /// Waits for the browser's redirect answering `login`, answers it, closes the listener, and
    /// returns its authorization code, checked by ``AuthorizationCodeRequest/code(fromRedirect:)``.
    ///
    /// - Parameters:
    ///   - login: The request whose URL the user opened, with this receiver's ``redirectURI``.
    ///   - timeout: How long the user has to log in, 5 minutes by default.
    /// - Throws: An ``AuthorizationCodeError`` when the redirect for `login` carries no code (the
    ///   user declined); ``LoopbackRedirectError/timedOut``; ``LoopbackRedirectError/alreadyUsed``
    ///   on a second call or after ``close()``; `CancellationError` when the task is cancelled or
    ///   ``close()`` is called meanwhile (the listener is closed then).
    public func code(for login: AuthorizationCodeRequest, timeout: TimeInterval = 300) async throws -> String {
        let started = state.withLock { state -> Bool in
            guard case .ready = state else { return false }
            state = .waiting
            return true
        }
        guard started else { throw LoopbackRedirectError.alreadyUsed }
        let deadline = DispatchTime.after(seconds: timeout.isNaN ? 0 : timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let thread = Thread { [self] in
                    let result = Result { try serve(login, until: deadline) }
                    // Marked closed under the lock that `close()` shuts the listener down under, and
                    // only then released: a shutdown never meets a descriptor number reused meanwhile.
                    state.withLock { $0 = .closed }
                    LoopbackListener.release(listener)
                    continuation.resume(with: result)
                }
                thread.name = "RefreshQueue loopback redirect"
                thread.start()
            }
        } onCancel: {
            close()
        }
    }

    /// Stops listening; a wait for the redirect ends with `CancellationError`. Later calls do
    /// nothing.
    public func close() {
        state.withLock { state in
            switch state {
            case .ready:
                LoopbackListener.release(listener)
            case .waiting:
                // Shut down, not closed: the waiting thread polls the descriptor, which must not
                // be reused meanwhile. It sees the state and closes the descriptor itself.
                LoopbackListener.shutDown(listener)
            case .closed:
                break
            }
            state = .closed
        }
    }

    private var isClosed: Bool {
        state.withLock { if case .closed = $0 { return true } else { return false } }
    }

    /// Accepts connections until one asks for the callback path, or `deadline`.
    private func serve(_ login: AuthorizationCodeRequest, until deadline: DispatchTime) throws -> String {
        while true {
            guard !isClosed else { throw CancellationError() }
            guard DispatchTime.now() < deadline else { throw LoopbackRedirectError.timedOut }
            guard let connection = LoopbackListener.accept(listener, waitingAtMost: 0.2) else { continue }
            defer { LoopbackListener.release(connection) }
            guard !isClosed else { throw CancellationError() }
            let head = LoopbackListener.readHead(
                connection, limit: Self.maximumRequestHead,
                until: min(deadline, DispatchTime.after(seconds: Self.connectionDeadline)),
                unless: { [self] in isClosed })
            switch LoopbackCallbackRequest(head: head, path: path) {
            case .callback(let target):
                do {
                    guard let redirect = URL(string: origin + target) else { throw AuthorizationCodeError.missingCode }
                    let code = try login.code(fromRedirect: redirect)
                    LoopbackListener.send(LoopbackCallbackRequest.page(loggedIn: true), to: connection)
                    return code
                } catch AuthorizationCodeError.stateMismatch {
                    // Not this login's redirect (a page probing loopback ports, an old tab): it
                    // cannot end the wait, or any page could fail the real login.
                    LoopbackListener.send(LoopbackCallbackRequest.page(loggedIn: false), to: connection)
                } catch {
                    LoopbackListener.send(LoopbackCallbackRequest.page(loggedIn: false), to: connection)
                    throw error
                }
            case .other(let status):
                LoopbackListener.send(LoopbackCallbackRequest.plain(status: status), to: connection)
            case .unreadable:
                continue
            }
        }
    }
}
