import Foundation
import RefreshQueue

/// Commands to one Redis server over one connection, opened on first use, again on the next call
/// after it failed, and again before a call when the server has closed it meanwhile.
///
/// Calls from several threads take turns: each runs its commands and reads their replies whole
/// under the client's lock, so replies never interleave. Every wait is bounded by the
/// configuration's deadlines, the wait for a turn included: a call ends at most the connect and
/// command deadlines after it was made, however many calls are ahead of it.
final class RedisClient: @unchecked Sendable {
    let configuration: RedisConfiguration
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var connection: RedisConnection?

    init(_ configuration: RedisConfiguration) {
        self.configuration = configuration
    }

    /// Sends `commands` pipelined and returns one reply for each. A transport or protocol error
    /// drops the connection; the next call connects again.
    func run(_ commands: [RESPCommand]) throws(RedisError) -> [RESPValue] {
        var sent = false
        return try run(commands, sent: &sent)
    }

    /// `run(_:)`, setting `sent` once the commands may have reached the server: a call that
    /// failed before (waiting for its turn, connecting) ran nothing there.
    func run(_ commands: [RESPCommand], sent: inout Bool) throws(RedisError) -> [RESPValue] {
        let connectSeconds = RedisConfiguration.seconds(configuration.connectTimeout)
        let commandSeconds = RedisConfiguration.seconds(configuration.commandTimeout)
        let end = ProcessInfo.processInfo.systemUptime + connectSeconds + commandSeconds
        guard lock.lock(before: Date(timeIntervalSinceNow: connectSeconds + commandSeconds)) else {
            throw .timedOut(commands.map(\.name).joined(separator: ", "))
        }
        defer { lock.unlock() }
        do throws(RedisError) {
            let open: RedisConnection
            if let connection, !connection.isStale {
                open = connection
            } else {
                open = try RedisConnection(
                    configuration, deadline: min(RedisConfiguration.deadline(after: connectSeconds), end))
                connection = open
            }
            sent = true
            return try open.exchange(
                commands, deadline: min(RedisConfiguration.deadline(after: commandSeconds), end))
        } catch {
            connection = nil
            throw error
        }
    }

    /// Sends one command and returns its reply; a server error reply throws
    /// ``RedisError/commandFailed(command:message:)``.
    func run(_ command: RESPCommand) throws(RedisError) -> RESPValue {
        var sent = false
        return try run(command, sent: &sent)
    }

    /// The one-command `run(_:)`, setting `sent` as `run(_:sent:)` does for several.
    func run(_ command: RESPCommand, sent: inout Bool) throws(RedisError) -> RESPValue {
        let reply = try run([command], sent: &sent)[0]
        if case .error(let message) = reply {
            throw .commandFailed(command: command.name, message: RedisConnection.safe(message))
        }
        return reply
    }
}
