import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `redis-server` of this machine's, started on a free loopback port with a random password,
/// for the Example's `--fleet` and the Redis tests. It keeps its data in a directory of its own
/// (append-only file), so that ``restart(timeout:)`` finds what was stored, as a production server
/// would. The server ends when ``stop()`` is called or this object is released; the directory is
/// deleted with the object.
///
/// The binary is `$REDIS_SERVER` when set, else `redis-server` on the `PATH`. The password goes
/// to the server on its standard input, never on a command line.
public final class LocalRedis: @unchecked Sendable {
    /// Why no server could be started.
    public struct StartError: Error, CustomStringConvertible {
        /// A sentence saying what to do.
        public let description: String
    }

    /// The server's port on 127.0.0.1.
    public let port: Int
    /// The password clients must send (`AUTH`).
    public let password: String
    /// The server's version, as it printed it (`7.0.15`), or `unknown`.
    public var version: String {
        lock.lock()
        defer { lock.unlock() }
        return printedVersion
    }
    /// The binary that was started.
    public let executable: URL

    /// Where the server keeps its data: a directory only this user can enter, since the data
    /// holds whatever was stored (tokens, in the Example).
    public let dataDirectory: URL
    /// The running server's process, if it runs.
    public var processIdentifier: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return process?.processIdentifier
    }
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var process: Process?
    /// Guarded by `lock`.
    private var printedVersion = "unknown"
    /// Told of each server process started, and of the data directory.
    private let started: ((_ process: Int32, _ directory: URL) -> Void)?

    /// The `redis-server` binary to start, or nil when there is none (or `$REDIS_SERVER` names
    /// something that cannot be run: it is not replaced by another binary behind one's back).
    public static func findExecutable() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["REDIS_SERVER"], !explicit.isEmpty {
            return FileManager.default.isExecutableFile(atPath: explicit) ? URL(fileURLWithPath: explicit) : nil
        }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("redis-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Starts a server and waits (at most `timeout` seconds) until it accepts connections.
    ///
    /// `started` learns the server's process and data directory as soon as they exist, before the
    /// server is ready: whoever must clean up after an interruption knows them from the start.
    public init(timeout: TimeInterval = 10, started: ((_ process: Int32, _ directory: URL) -> Void)? = nil) throws {
        if let explicit = ProcessInfo.processInfo.environment["REDIS_SERVER"], !explicit.isEmpty,
            !FileManager.default.isExecutableFile(atPath: explicit)
        {
            throw StartError(description: "REDIS_SERVER is \(explicit), which is not an executable file")
        }
        guard let executable = Self.findExecutable() else {
            throw StartError(
                description:
                    "redis-server was not found on the PATH (install it, e.g. `apt-get install redis-server`, "
                    + "or set REDIS_SERVER to its path)")
        }
        self.executable = executable
        port = try Self.freePort()
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        self.started = started
        var generator = SystemRandomNumberGenerator()
        password = (0..<2).map { _ in String(generator.next() as UInt64, radix: 36) }.joined(separator: "-")
        do {
            try start(timeout: timeout)
        } catch {
            // No deinit for an object that was never made: its directory goes here.
            try? FileManager.default.removeItem(at: dataDirectory)
            throw error
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// Stops the server and waits for it to end.
    ///
    /// With `SIGKILL`, at once: nothing stored is lost, since every write is in the append-only
    /// file before the server answers it.
    public func stop() {
        lock.lock()
        let running = process
        process = nil
        lock.unlock()
        guard let running, running.isRunning else { return }
        kill(running.processIdentifier, SIGKILL)
        running.waitUntilExit()
    }

    /// Starts the server again on the same port, with the same password and what it had stored
    /// (read back from its append-only file).
    public func restart(timeout: TimeInterval = 10) throws {
        stop()
        try start(timeout: timeout)
    }

    /// `text` as one argument of a configuration line: in double quotes, with backslashes, double
    /// quotes and line breaks escaped (a path may hold any of them, and spaces).
    static func quoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        return "\"" + escaped + "\""
    }

    private func start(timeout: TimeInterval) throws {
        let server = Process()
        server.executableURL = executable
        server.arguments = ["-"]
        let input = Pipe()
        let output = Pipe()
        server.standardInput = input
        server.standardOutput = output
        server.standardError = output
        try Self.runWithNoSignalBlocked(server)
        started?(server.processIdentifier, dataDirectory)
        let configuration = [
            "port \(port)", "bind 127.0.0.1", "requirepass \(password)", "save \"\"", "appendonly yes",
            "appendfsync always", "daemonize no", "protected-mode yes", "dir \(Self.quoted(dataDirectory.path))",
            "logfile \"\"", "loglevel notice",
        ].joined(separator: "\n")
        // Written through the descriptor: a server that has exited already leaves a closed pipe,
        // which `FileHandle.write(_:)` turns into a crash. Its end is reported below instead. (The
        // few hundred bytes fit a pipe's buffer, so one write takes them all or nothing.)
        let bytes = Array((configuration + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
        try? input.fileHandleForWriting.close()
        // Read what it prints until it is ready, on a thread of its own: a server that never
        // becomes ready must not block the caller past the timeout.
        let ready = DispatchSemaphore(value: 0)
        let log = LogLines()
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                if pending.count > 16_384 { pending = pending.suffix(8_192) }
                let text = String(decoding: pending, as: UTF8.self)
                log.set(text)
                if text.contains("Ready to accept connections") { ready.signal() }
            }
            ready.signal()
        }
        guard ready.wait(timeout: .now() + timeout) == .success, log.text.contains("Ready to accept connections")
        else {
            // SIGKILL, as in `stop()`: a blocked SIGTERM would leave it running.
            if server.isRunning {
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
            }
            let tail = log.text.split(separator: "\n").suffix(3).joined(separator: " / ")
            throw StartError(description: "redis-server did not start on port \(port): \(tail)")
        }
        let printed = log.text.range(of: "Redis version=").map {
            String(log.text[$0.upperBound...].prefix { $0 != "," && $0 != " " })
        }
        lock.lock()
        process = server
        if let printed { printedVersion = printed }
        lock.unlock()
    }

    /// A port nothing listens on now: bound once to port 0 and released.
    private static func freePort() throws -> Int {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw StartError(description: "no socket for a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw StartError(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// What the server printed so far.
extension LocalRedis {
    /// Starts `process` from a thread of its own that blocks no signal. A child inherits the
    /// signal mask of the thread that starts it, and a dispatch worker blocks signals: a server
    /// started from one would ignore `SIGTERM` for ever, also once its parent is gone and a
    /// person tries to end it.
    fileprivate static func runWithNoSignalBlocked(_ process: Process) throws {
        let start = Start(process)
        Thread.detachNewThread {
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            start.run()
        }
        try start.wait()
    }

    /// One start of a process on another thread, and its result.
    private final class Start: @unchecked Sendable {
        private let process: Process
        private let done = DispatchSemaphore(value: 0)
        /// Written before `done` is signalled, read after it is waited for.
        private var failure: (any Error)?

        init(_ process: Process) {
            self.process = process
        }

        func run() {
            do {
                try process.run()
            } catch {
                failure = error
            }
            done.signal()
        }

        func wait() throws {
            done.wait()
            if let failure { throw failure }
        }
    }
}

private final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = ""

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ text: String) {
        lock.lock()
        stored = text
        lock.unlock()
    }
}
