import Foundation

/// Where the app's accounts service and token file are, set once at start-up.
///
/// `RefreshableAuthentication.find()` is static, so an app keeps this kind of configuration in
/// one shared place.
final class AppEnvironment: @unchecked Sendable {
    static let shared = AppEnvironment()

    struct Values: Sendable {
        let accounts: SpotifyAccounts
        let tokenFile: TokenFile
    }

    private let lock = NSLock()
    private var values: Values?

    func configure(_ values: Values) {
        lock.lock()
        defer { lock.unlock() }
        self.values = values
    }

    func current() throws -> Values {
        lock.lock()
        defer { lock.unlock() }
        guard let values else { throw ExampleError.notConfigured }
        return values
    }
}
