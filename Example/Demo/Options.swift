import Foundation

/// The walkthrough's command-line options.
struct Options {
    var requests = 50
    var lifetime: TimeInterval = 3600
    var rotate = false
    var publicClient = false
    var serve = false
    var help = false
    var processes = 1
    /// Set in a worker process started by `--processes`: where the parent's server and token are.
    var worker: Worker?

    struct Worker {
        var baseURL: URL
        var tokenFile: URL
        var index: Int
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
          --serve             only run the token server and print its URL, for trying it with curl
          --help              show this text
        """

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
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
            case "--worker":
                // Internal: how `--processes` starts its children.
                guard let base = remaining.popFirst().flatMap(URL.init(string:)),
                    let file = remaining.popFirst().map(URL.init(fileURLWithPath:)),
                    let index = remaining.popFirst().flatMap(Int.init)
                else {
                    throw ExampleError.usage("--worker needs a base URL, a token file and an index")
                }
                worker = Worker(baseURL: base, tokenFile: file, index: index)
            case "--rotate":
                rotate = true
            case "--public-client":
                publicClient = true
            case "--serve":
                serve = true
            case "--help", "-h":
                help = true
            default:
                throw ExampleError.usage("unknown option \(argument)")
            }
        }
    }
}
