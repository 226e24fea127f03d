import Foundation

/// The worker's command line.
struct WorkerOptions: Sendable {
    enum Mode: String, Sendable {
        /// Requests from `concurrency` loops for `seconds`, then a result line.
        case soak
        /// Requests from `concurrency` loops until standard input closes, then a result line.
        case kill
        /// `requests` requests from `concurrency` loops, then a result line.
        case burst
    }

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    var mode: Mode
    var baseURL: URL
    /// The shared token file, unless the token is in Redis.
    var tokenFile: URL?
    /// The port of a Redis server on 127.0.0.1 holding the token under `redisKey`; its password
    /// comes from the environment (`REFRESHQUEUE_REDIS_PASSWORD`), never the command line.
    var redisPort: Int?
    var redisKey = "refreshqueue:token"
    var lockTTL: TimeInterval = 120
    var requests = 500
    var concurrency = 8
    var seconds: TimeInterval = 5
    var warmUp: TimeInterval = 1
    var refreshTimeout: TimeInterval = 3
    var requestTimeout: TimeInterval = 2

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        guard let mode = remaining.popFirst().flatMap(Mode.init(rawValue:)) else {
            throw UsageError(description: "the first argument must be soak or kill")
        }
        var base: URL?
        var file: URL?
        var values: [String: Double] = [:]
        while let name = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw UsageError(description: "\(name) needs a value") }
            switch name {
            case "--base": base = URL(string: value)
            case "--file": file = URL(fileURLWithPath: value)
            case "--redis-key": redisKey = value
            case "--concurrency", "--seconds", "--warm-up", "--refresh-timeout", "--request-timeout", "--redis-port",
                "--lock-ttl", "--requests":
                guard let number = Double(value), number.isFinite, number > 0 else {
                    throw UsageError(description: "\(name) needs a positive number")
                }
                values[name] = number
            default: throw UsageError(description: "unknown option \(name)")
            }
        }
        redisPort = values["--redis-port"].map { Int($0) }
        guard let base, (file == nil) != (redisPort == nil) else {
            throw UsageError(description: "--base and one of --file and --redis-port are required")
        }
        self.mode = mode
        baseURL = base
        tokenFile = file
        lockTTL = values["--lock-ttl"] ?? lockTTL
        requests = values["--requests"].map { Int($0) } ?? requests
        concurrency = values["--concurrency"].map { Int($0) } ?? concurrency
        seconds = values["--seconds"] ?? seconds
        warmUp = values["--warm-up"] ?? warmUp
        refreshTimeout = values["--refresh-timeout"] ?? refreshTimeout
        requestTimeout = values["--request-timeout"] ?? requestTimeout
    }
}
