extension SpotifyStub {
    /// Why `start()` could not start serving.
    public enum ServerError: Error, Equatable, CustomStringConvertible {
        /// `start()` was called while the stub was already serving.
        case alreadyRunning
        /// A socket call failed; `call` names it (`socket`, `bind`, `listen`...) and `errno` is
        /// the system error, e.g. `EADDRINUSE` when the port is taken.
        case socket(call: String, errno: Int32)

        /// A readable explanation, e.g. for the Example's `--serve` mode to print.
        public var description: String {
            switch self {
            case .alreadyRunning:
                return "SpotifyStub is already running"
            case .socket(let call, let code):
                return "SpotifyStub: \(call)() failed with errno \(code)"
            }
        }
    }
}
