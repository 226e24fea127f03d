import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A minimal client of Spotify's accounts service: the authorize URL and the token endpoint.
struct SpotifyAccounts: Sendable {
    let baseURL: URL
    let clientID: String
    let clientSecret: String
    let redirectURI: String
    let session: URLSession

    /// `/authorize?client_id&response_type=code&redirect_uri&state&scope`.
    func authorizeURL(state: String, scope: String = "user-read-private") -> URL? {
        var components = URLComponents(url: baseURL.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "scope", value: scope),
        ]
        return components?.url
    }

    /// Exchanges an authorization code for tokens (`grant_type=authorization_code`).
    func exchange(code: String) async throws -> TokenResponse {
        try await token(["grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI])
    }

    /// Asks for a new access token (`grant_type=refresh_token`).
    func refresh(using refreshToken: String) async throws -> TokenResponse {
        try await token(["grant_type": "refresh_token", "refresh_token": refreshToken])
    }

    private func token(_ parameters: [String: String]) async throws -> TokenResponse {
        var request = URLRequest(url: baseURL.appendingPathComponent("api/token"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let credentials = Data("\(clientID):\(clientSecret)".utf8).base64EncodedString()
        request.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
        request.httpBody = Data(FormEncoding.encode(parameters).utf8)
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            let body = try? JSONDecoder().decode(TokenErrorResponse.self, from: data)
            throw ExampleError.tokenEndpoint(status: status, error: body?.error, description: body?.errorDescription)
        }
        do {
            return try JSONDecoder().decode(TokenResponse.self, from: data)
        } catch {
            throw ExampleError.malformedResponse("the token response is not the expected JSON")
        }
    }
}

/// A successful token response (RFC 6749 §5.1), as Spotify sends it.
struct TokenResponse: Decodable, Sendable {
    let accessToken: String
    let tokenType: String
    let expiresIn: TimeInterval
    let refreshToken: String?
    let scope: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case scope
    }
}

/// An error response (RFC 6749 §5.2).
struct TokenErrorResponse: Decodable {
    let error: String
    let errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }
}

/// `application/x-www-form-urlencoded`, as the token endpoint expects.
enum FormEncoding {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ parameters: [String: String]) -> String {
        parameters.sorted { $0.key < $1.key }
            .map { "\(escape($0.key))=\(escape($0.value))" }
            .joined(separator: "&")
    }

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
