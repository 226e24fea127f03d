import Foundation

/// One authenticated connection: sends commands and reads their replies in order.
///
/// Not thread-safe; ``RedisClient`` owns it under its lock. After any transport or protocol
/// error the connection is in an unknown state and must be dropped.
final class RedisConnection {
    private let socket: RedisSocket
    private var parser: RESPParser
    private let configuration: RedisConfiguration

    /// Connects, authenticates and selects the database before `deadline` (monotonic seconds).
    init(_ configuration: RedisConfiguration, deadline: TimeInterval) throws(RedisError) {
        self.configuration = configuration
        socket = try RedisSocket(host: configuration.host, port: configuration.port, deadline: deadline)
        parser = RESPParser(maximumReplySize: configuration.maximumReplySize)
        var handshake: [RESPCommand] = []
        if let username = configuration.username {
            // A user without a password (`nopass`) takes any: it is still that user, not `default`.
            handshake.append(RESPCommand("AUTH", [username, configuration.password ?? ""]))
        } else if let password = configuration.password {
            handshake.append(RESPCommand("AUTH", [password]))
        }
        if configuration.database != 0 { handshake.append(RESPCommand("SELECT", [String(configuration.database)])) }
        guard !handshake.isEmpty else { return }
        let replies = try exchange(handshake, deadline: deadline)
        for (command, reply) in zip(handshake, replies) {
            if case .error(let message) = reply {
                // A full server (`ERR max number of clients reached`) answers whatever comes
                // first: that is an outage, not a refused password.
                let refusesCredentials = command.name == "AUTH" && !RedisError.isUnavailable(message)
                if refusesCredentials || Self.isAuthenticationError(message) {
                    throw .authenticationFailed(Self.code(of: message))
                }
                throw .commandFailed(command: command.name, message: Self.safe(message))
            }
        }
    }

    /// Whether the connection can no longer carry a command (see ``RedisSocket/isStale``).
    var isStale: Bool { socket.isStale }

    /// Sends `commands` at once (pipelined) and reads one reply for each, in order.
    func exchange(_ commands: [RESPCommand], deadline: TimeInterval? = nil) throws(RedisError) -> [RESPValue] {
        let deadline = deadline ?? RedisConfiguration.deadline(after: configuration.commandTimeout)
        let operation = commands.map(\.name).joined(separator: ", ")
        var bytes: [UInt8] = []
        for command in commands { bytes.append(contentsOf: command.encoded) }
        try socket.send(bytes, deadline: deadline, operation: operation)
        var replies: [RESPValue] = []
        while replies.count < commands.count {
            if let reply = try parser.next() {
                if case .error(let message) = reply, Self.isAuthenticationError(message) {
                    throw .authenticationFailed(Self.code(of: message))
                }
                replies.append(reply)
                continue
            }
            let received = try socket.receive(
                limit: configuration.maximumReplySize, deadline: deadline, operation: operation)
            try parser.append(received)
        }
        guard parser.pendingByteCount == 0 else { throw .protocolViolation("more replies than commands") }
        return replies
    }

    /// `NOAUTH …` or `WRONGPASS …`.
    private static func isAuthenticationError(_ message: String) -> Bool {
        message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS")
            || message.hasPrefix("ERR invalid password") || message.hasPrefix("ERR AUTH")
            || message.hasPrefix("ERR Client sent AUTH")
    }

    /// The error's first word (`WRONGPASS`, `NOAUTH`, `ERR`).
    private static func code(of message: String) -> String {
        String(message.prefix { $0 != " " }.prefix(32))
    }

    /// A server error line fit for an error's text: what Redis echoes of a command's arguments
    /// (a value, a password) is cut, and the rest kept to 200 visible ASCII characters.
    static func safe(_ message: String) -> String {
        var text = message
        if let echo = text.range(of: ", with args beginning with") { text = String(text[..<echo.lowerBound]) }
        return String(
            String.UnicodeScalarView(text.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }).prefix(200))
    }
}
