import Foundation
import RefreshQueue

/// The app's authentication, written the way a user of RefreshQueue writes one.
///
/// It is what the token endpoint returned, plus when the access token expires. `refresh()` asks
/// the accounts service for a new access token and persists the result; `find()` reads what was
/// persisted.
struct SpotifyAuthentication: RefreshableAuthentication, Codable {
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date
    /// The lifetime the server gave the access token, in seconds.
    let lifetime: TimeInterval

    /// Refresh when less than half the lifetime is left, but no earlier than a minute before
    /// expiry: a request signed now must still be valid when it reaches the server.
    var isRefreshNeeded: Bool {
        expiresAt.timeIntervalSinceNow < min(60, lifetime / 2)
    }

    func refresh() -> Future<SpotifyAuthentication> {
        let refreshToken = self.refreshToken
        return Future(operation: {
            let environment = try AppEnvironment.shared.current()
            let response = try await environment.accounts.refresh(using: refreshToken)
            let fresh = SpotifyAuthentication(response, previousRefreshToken: refreshToken)
            try environment.tokenFile.save(fresh)
            return fresh
        })
    }

    static func find() -> SpotifyAuthentication? {
        guard let environment = try? AppEnvironment.shared.current() else { return nil }
        return environment.tokenFile.load()
    }
}

extension SpotifyAuthentication {
    /// The authentication a token response stands for.
    ///
    /// A refresh response may leave out the refresh token: then the old one stays valid
    /// (RFC 6749 §6). When the server rotates refresh tokens, the new one replaces the old one.
    init(_ response: TokenResponse, previousRefreshToken: String?, now: Date = Date()) {
        accessToken = response.accessToken
        refreshToken = response.refreshToken ?? previousRefreshToken ?? ""
        lifetime = response.expiresIn
        expiresAt = now.addingTimeInterval(response.expiresIn)
    }

    /// The same authentication as if `seconds` had passed.
    func aged(by seconds: TimeInterval) -> SpotifyAuthentication {
        SpotifyAuthentication(
            accessToken: accessToken, refreshToken: refreshToken,
            expiresAt: expiresAt.addingTimeInterval(-seconds), lifetime: lifetime)
    }
}

extension SpotifyAuthentication: CustomStringConvertible {
    /// Tokens are secrets: the description says only when the access token expires.
    var description: String {
        "SpotifyAuthentication(access token expires in \(Int(expiresAt.timeIntervalSinceNow.rounded())) s)"
    }
}
