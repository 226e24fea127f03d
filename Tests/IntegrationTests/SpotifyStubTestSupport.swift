import Foundation
import SpotifyStub
import Testing
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Helpers for the SpotifyStub tests, namespaced so they cannot collide with helpers of other
/// test files in this target.
enum StubHarness {
    /// A started stub on an OS-chosen port; the caller stops it.
    static func startedStub(clients: [SpotifyStub.Client] = [.example]) throws -> SpotifyStub {
        let stub = SpotifyStub(clients: clients)
        try stub.start()
        return stub
    }

    // MARK: - URLSession

    /// Refuses every redirect, so a test sees the 302 from `/authorize` itself (and a custom-scheme
    /// `Location` is never fetched).
    ///
    /// It also cancels authentication challenges. swift-corelibs-foundation (Linux, at least up to
    /// 6.3.1) suspends a task forever when a 401 carries `WWW-Authenticate: Basic` and no
    /// credential is stored, ignoring the request timeout; cancelling turns that hang into a quick
    /// `URLError.cancelled`. Tests that need to see such a 401 use `RawClient` instead.
    final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    /// An ephemeral session that does not follow redirects, with a short request timeout so no
    /// test can hang on a silent server.
    static func makeSession(timeout: TimeInterval = 10) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// The status, headers and body of one exchange.
    struct Exchange: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data

        /// The value of a header, looked up case-insensitively.
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// The body as a JSON object, or `nil` if it is not one.
        var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }

        /// The body as UTF-8 text.
        var text: String {
            String(decoding: body, as: UTF8.self)
        }
    }

    /// Sends `request` and returns the response, without following redirects.
    static func send(_ request: URLRequest, on session: URLSession) async throws -> Exchange {
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String {
                headers[key] = value
            }
        }
        return Exchange(status: http.statusCode, headers: headers, body: data)
    }

    /// `GET` of `path` (which may include a query), with an optional bearer token.
    static func get(_ path: String, on stub: SpotifyStub, session: URLSession, bearer: String? = nil) async throws
        -> Exchange
    {
        let url = try #require(URL(string: stub.baseURL.absoluteString + path))
        var request = URLRequest(url: url)
        if let bearer {
            request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        }
        return try await send(request, on: session)
    }

    /// How the token request authenticates the client.
    enum ClientAuthentication {
        /// `Authorization: Basic base64(id:secret)`.
        case basic(id: String, secret: String)
        /// `client_id` and `client_secret` in the body.
        case body(id: String, secret: String)
        /// No credentials at all.
        case none

        /// The example client, authenticated with Basic.
        static let example = ClientAuthentication.basic(id: "example-client", secret: "example-secret")
    }

    /// A form-encoded `POST /api/token`.
    static func tokenRequest(
        _ stub: SpotifyStub,
        _ parameters: [(String, String)],
        authentication: ClientAuthentication = .example,
        contentType: String? = "application/x-www-form-urlencoded"
    ) -> URLRequest {
        var request = URLRequest(url: stub.baseURL.appendingPathComponent("api/token"))
        request.httpMethod = "POST"
        var all = parameters
        switch authentication {
        case .basic(let id, let secret):
            let credentials = Data("\(id):\(secret)".utf8).base64EncodedString()
            request.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
        case .body(let id, let secret):
            all += [("client_id", id), ("client_secret", secret)]
        case .none:
            break
        }
        if let contentType {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        request.httpBody = Data(formEncode(all).utf8)
        return request
    }

    /// `application/x-www-form-urlencoded` encoding.
    static func formEncode(_ parameters: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return parameters.map { name, value in
            let encodedName = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
            let encodedValue = value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
            return "\(encodedName)=\(encodedValue)"
        }
        .joined(separator: "&")
    }

    /// The `/authorize` query for the example client.
    static func authorizePath(
        clientID: String = "example-client",
        redirectURI: String = "refreshqueue-example://callback",
        responseType: String? = "code",
        state: String? = "xyz",
        scope: String? = "user-read-private user-read-email"
    ) -> String {
        var parameters = [("client_id", clientID), ("redirect_uri", redirectURI)]
        if let responseType {
            parameters.append(("response_type", responseType))
        }
        if let state {
            parameters.append(("state", state))
        }
        if let scope {
            parameters.append(("scope", scope))
        }
        return "/authorize?" + formEncode(parameters)
    }

    /// The query items of a `Location` header.
    static func queryItems(of location: String) throws -> [String: String] {
        let components = try #require(URLComponents(string: location))
        var items: [String: String] = [:]
        for item in components.queryItems ?? [] {
            items[item.name] = item.value ?? ""
        }
        return items
    }

    /// Runs `/authorize` and returns the code from the redirect.
    static func authorizationCode(_ stub: SpotifyStub, session: URLSession, scope: String = "user-read-private")
        async throws -> String
    {
        let exchange = try await get(authorizePath(scope: scope), on: stub, session: session)
        try #require(exchange.status == 302)
        let location = try #require(exchange.header("Location"))
        return try #require(try queryItems(of: location)["code"])
    }

    /// The tokens of a successful token response.
    struct Tokens: Sendable {
        var accessToken: String
        var refreshToken: String?
        var expiresIn: Double
        var scope: String?
    }

    /// Parses a 200 token response.
    static func tokens(from exchange: Exchange) throws -> Tokens {
        try #require(exchange.status == 200, "token request failed: \(exchange.status) \(exchange.text)")
        let json = try #require(exchange.json)
        let accessToken = try #require(json["access_token"] as? String)
        let expiresIn = try #require((json["expires_in"] as? NSNumber)?.doubleValue)
        return Tokens(
            accessToken: accessToken,
            refreshToken: json["refresh_token"] as? String,
            expiresIn: expiresIn,
            scope: json["scope"] as? String
        )
    }

    /// Authorizes the example client and exchanges the code: a fresh token family.
    static func login(_ stub: SpotifyStub, session: URLSession) async throws -> Tokens {
        let code = try await authorizationCode(stub, session: session)
        let exchange = try await send(
            tokenRequest(
                stub,
                [
                    ("grant_type", "authorization_code"), ("code", code),
                    ("redirect_uri", "refreshqueue-example://callback"),
                ]
            ),
            on: session
        )
        return try tokens(from: exchange)
    }

    /// An authorization-code grant for the example client.
    static func exchange(_ stub: SpotifyStub, code: String, redirectURI: String, on session: URLSession)
        async throws -> Exchange
    {
        try await send(
            tokenRequest(stub, [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI)]),
            on: session)
    }

    /// A refresh-token grant, for the example client unless `authentication` says otherwise.
    static func refresh(
        _ stub: SpotifyStub, _ refreshToken: String, session: URLSession,
        authentication: ClientAuthentication = .example
    ) async throws -> Exchange {
        try await send(
            tokenRequest(
                stub, [("grant_type", "refresh_token"), ("refresh_token", refreshToken)],
                authentication: authentication),
            on: session
        )
    }

    /// Sends `request` on a fresh raw connection and reads one response.
    static func rawExchange(_ stub: SpotifyStub, _ request: String) throws -> RawResponse {
        let client = try RawClient(port: stub.port)
        defer { client.close() }
        try client.send(request)
        return try client.readResponse()
    }

    /// A raw `POST /api/token` with the given form body and extra header lines.
    static func rawTokenRequest(_ body: String, headers: [String] = []) -> String {
        var lines = [
            "POST /api/token HTTP/1.1",
            "Host: 127.0.0.1",
            "Content-Type: application/x-www-form-urlencoded",
            "Content-Length: \(body.utf8.count)",
            "Connection: close",
        ]
        lines += headers
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    // MARK: - Waiting

    /// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held.
    /// Used only where the test is about time passing or about the server catching up with a
    /// socket event it cannot signal.
    static func eventually(timeout: TimeInterval = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() {
                return true
            }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return condition()
    }
}

extension StubHarness {
    typealias RawClient = RawHTTPClient
    typealias RawResponse = RawHTTPResponse
    typealias RawClientError = RawHTTPClientError
}
