import Foundation
import RefreshQueue
import RefreshQueueRedis
import SpotifyStub
import Workload

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Workload {
    /// `GET /v1/me` through a closure of its own on the shared token file (or Redis key), as the
    /// example client.
    init(options: WorkerOptions, tally: Tally, onReauthenticationRequired: @escaping @Sendable (any Error) -> Void)
        throws
    {
        let example = SpotifyStub.Client.example
        let client = TokenEndpointClient(
            tokenURL: options.baseURL.appendingPathComponent("api/token"), clientID: example.id,
            clientSecret: example.secret, requestTimeout: options.requestTimeout)
        let closureOptions = RefreshingRequestClosure<OAuth2Authentication>.Options(
            refreshTimeout: options.refreshTimeout,
            abandonAfter: options.redisPort == nil ? nil : options.lockTTL,
            refreshWindow: .unlimited,
            requiresAuthentication: { $0.url?.path.hasPrefix("/v1/") == true })
        let closure: RefreshingRequestClosure<OAuth2Authentication>
        if let port = options.redisPort {
            let password = ProcessInfo.processInfo.environment["REFRESHQUEUE_REDIS_PASSWORD"]
            let store = RedisAuthenticationStore<OAuth2Token>(
                key: options.redisKey, configuration: RedisConfiguration(port: port, password: password),
                lockTTL: options.lockTTL)
            closure = RefreshingRequestClosure(
                client: client, store: store, options: closureOptions,
                onReauthenticationRequired: onReauthenticationRequired)
        } else if let file = options.tokenFile {
            closure = RefreshingRequestClosure(
                client: client, store: try FileAuthenticationStore<OAuth2Token>(fileURL: file), options: closureOptions,
                onReauthenticationRequired: onReauthenticationRequired)
        } else {
            throw WorkerOptions.UsageError(description: "no token file and no Redis port")
        }
        self.init(closure: closure, url: options.baseURL.appendingPathComponent("v1/me"), tally: tally)
    }
}

extension Workload {
    /// The worker's workload, counting `reauth` when the closure asks for a new login; `nil`
    /// (after saying why) when it cannot be set up.
    static func started(options: WorkerOptions, tally: Tally) -> Workload? {
        do {
            return try Workload(options: options, tally: tally) { _ in tally.count("reauth") }
        } catch {
            say("error \(error)")
            return nil
        }
    }
}

/// Writes a line to standard output at once (the parent reads it while this process runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// A value shared between the worker's loops.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Changes the value and returns what `change` returns.
    func update<Result>(_ change: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return change(&stored)
    }
}
