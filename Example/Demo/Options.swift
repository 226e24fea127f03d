import Foundation

/// The walkthrough's command-line options.
struct Options {
    var requests = 50
    var lifetime: TimeInterval = 3600
    var rotate = false
    var publicClient = false
    /// Internal, for a worker process: the most requests it keeps in flight.
    var inFlight = Burst.concurrency
    var serve = false
    /// `--port N`: the token server's port (0: one the system picks).
    var port: UInt16 = 0
    /// `--login loopback`: log in as a command-line tool does, through a listener on 127.0.0.1.
    var loopbackLogin = false
    var help = false
    var processes = 1
    /// `--fleet K`: the K processes share the token through a Redis server instead of a file.
    var fleet = false
    /// Set in a worker process started by `--processes` or `--fleet`: where the parent's server
    /// and token are.
    var worker: Worker?

    struct Worker {
        var baseURL: URL
        var token: TokenLocation
        var index: Int
    }

    /// Where a worker finds the shared token.
    enum TokenLocation {
        /// A token file.
        case file(URL)
        /// A Redis server on this machine, `port`, under `key`; its password is in the
        /// environment (`REFRESHQUEUE_REDIS_PASSWORD`), never on a command line.
        case redis(port: Int, key: String)

        /// How the parent names it on the worker's command line.
        var argument: String {
            switch self {
            case .file(let url): return url.path
            case .redis(let port, let key): return "redis://127.0.0.1:\(port)/\(key)"
            }
        }

        init(argument: String) {
            if argument.hasPrefix("redis://"), let url = URL(string: argument), let port = url.port {
                self = .redis(port: port, key: String(url.path.dropFirst()))
            } else {
                self = .file(URL(fileURLWithPath: argument))
            }
        }
    }

    static let usage = """
        Usage: swift run Example [options]

        Walks through RefreshQueue against a local Spotify-like token server: logs in with the
        authorization-code flow, lets the access token expire, then fires many requests at once
        through a Moya-shaped provider, callbacks and async/await. Exactly one refresh serves them.

        Options:
          --requests N        concurrent requests to fire (default 50)
          --lifetime SECONDS  access-token lifetime the server grants, fractions allowed (default 3600)
          --rotate            the server rotates refresh tokens and detects reuse (RFC 9700)
          --public-client     log in and refresh as a public client (an iOS app): PKCE, no secret
          --processes K       run the requests in K processes sharing one token file (default 1);
                              --requests is then per process
          --fleet K           run them in K processes sharing the token through a Redis server
                              (redis-server on this machine, started on a free port, with a
                              password), each with its own RedisAuthenticationStore
          --login loopback    log in as a command-line tool does: the browser (played here) comes
                              back to a listener on 127.0.0.1, on a port the system picks
                              (default: the app's custom scheme, refreshqueue-example://callback)
          --serve             only run the token server and print its URL, the demo client's id,
                              secret and redirect URIs, for trying it with curl
          --port N            the token server's port (default: one the system picks)
          --help              show this text
        """

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        var sharing: String?
        while let argument = remaining.popFirst() {
            if argument == "--processes" || argument == "--fleet" {
                // One way of sharing the token: the second would silently win.
                if let first = sharing, first != argument {
                    throw ExampleError.usage("\(first) and \(argument) cannot be combined: choose one")
                }
                sharing = argument
            }
            switch argument {
            case "--requests":
                guard let value = remaining.popFirst().flatMap(Int.init), (1...100_000).contains(value) else {
                    throw ExampleError.usage("--requests needs a whole number from 1 to 100000")
                }
                requests = value
            case "--lifetime":
                guard let value = remaining.popFirst().flatMap(TimeInterval.init), value.isFinite, value >= 0.05,
                    value <= 86_400
                else {
                    throw ExampleError.usage("--lifetime needs a number of seconds from 0.05 to 86400")
                }
                lifetime = value
            case "--processes":
                guard let value = remaining.popFirst().flatMap(Int.init), (1...16).contains(value) else {
                    throw ExampleError.usage("--processes needs a whole number from 1 to 16")
                }
                processes = value
            case "--fleet":
                guard let value = remaining.popFirst().flatMap(Int.init), (1...16).contains(value) else {
                    throw ExampleError.usage("--fleet needs a whole number from 1 to 16")
                }
                processes = value
                fleet = true
            case "--worker":
                // Internal: how `--processes` starts its children.
                guard let base = remaining.popFirst().flatMap(URL.init(string:)),
                    let token = remaining.popFirst().map(TokenLocation.init(argument:)),
                    let index = remaining.popFirst().flatMap(Int.init)
                else {
                    throw ExampleError.usage("--worker needs a base URL, a token file or Redis URL and an index")
                }
                worker = Worker(baseURL: base, token: token, index: index)
            case "--in-flight":
                // Internal: a worker's share of the connections.
                guard let value = remaining.popFirst().flatMap(Int.init), (1...Burst.concurrency).contains(value)
                else {
                    throw ExampleError.usage("--in-flight needs a whole number from 1 to \(Burst.concurrency)")
                }
                inFlight = value
            case "--rotate":
                rotate = true
            case "--public-client":
                publicClient = true
            case "--serve":
                serve = true
            case "--port":
                guard let value = remaining.popFirst().flatMap(UInt16.init), value > 0 else {
                    throw ExampleError.usage("--port needs a port number from 1 to 65535")
                }
                port = value
            case "--login":
                switch remaining.popFirst() {
                case "loopback": loopbackLogin = true
                case "scheme": loopbackLogin = false
                default: throw ExampleError.usage("--login needs loopback or scheme")
                }
            case "--help", "-h":
                help = true
            default:
                throw ExampleError.usage("unknown option \(argument)")
            }
        }
    }
}
