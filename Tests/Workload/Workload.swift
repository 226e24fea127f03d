import Dispatch
import Foundation
import RefreshQueue

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests to one path of the stub, signed by a closure and counted in a ``Tally``: what the soak
/// runs in the test process and in its child, and what the crash-kill workers send.
///
/// Requests are signed through the closure's `async` `authorize(_:)` or its callback
/// `authorize(_:completion:)`, then sent over a keep-alive connection of the loop's own
/// (``RawHTTPClient``), not through URLSession: swift-corelibs-foundation's URLSession keeps about
/// 160 bytes per request on Linux for the life of the process (with or without this library),
/// which would hide whatever the library itself keeps from the soak's memory check.
public struct Workload: Sendable {
    public let closure: RefreshingRequestClosure<OAuth2Authentication>
    public let request: URLRequest
    public let tally: Tally
    private let port: UInt16
    private let path: String

    /// Requests to `url`, on 127.0.0.1.
    public init(closure: RefreshingRequestClosure<OAuth2Authentication>, url: URL, tally: Tally) {
        self.closure = closure
        request = URLRequest(url: url)
        self.tally = tally
        port = UInt16(url.port ?? 80)
        path = url.path
    }

    /// The keep-alive connection of one loop (one thread), opened again after a failure.
    public final class Connection: @unchecked Sendable {
        fileprivate var client: RawHTTPClient?

        public init() {}
    }

    /// `concurrency` loops over `workloads` (in turn), each on a thread of its own, until
    /// `seconds` have passed; every other loop signs through the callback API. Counts `started`
    /// and `ended` around every request.
    ///
    /// Threads rather than tasks: a loop blocks on its socket, and threads made up front keep the
    /// resident memory after the warm-up what it will be at the end.
    public static func run(_ workloads: [Workload], concurrency: Int, seconds: TimeInterval) async {
        let end = ProcessInfo.processInfo.systemUptime + seconds
        await onThreads(concurrency) { loop in
            let workload = workloads[loop % workloads.count]
            let withCallback = loop / workloads.count % 2 == 1
            let connection = Connection()
            while ProcessInfo.processInfo.systemUptime < end {
                workload.tally.count("started")
                workload.send(on: connection, withCallback: withCallback)
                workload.tally.count("ended")
            }
            connection.client?.close()
        }
    }

    /// Runs `body(0..<count)`, each on a new thread, and returns when all have returned.
    public static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
        let finished = DispatchGroup()
        for index in 0..<count {
            finished.enter()
            let thread = Thread {
                body(index)
                finished.leave()
            }
            thread.stackSize = 512 * 1024
            thread.start()
        }
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Signs the request (through the callback API if `withCallback`, whose completion must come
    /// exactly once: a second call is counted as `doubles`; else through `async`
    /// `authorize(_:)`), sends it, and after a 401 asks `reauthorize(_:response:)` for a new
    /// signature and sends once more, as `data(for:using:)` does. Counts the outcome, which it
    /// returns: `status<code>` or an ``ErrorKind``. Blocks the calling thread.
    @discardableResult
    public func send(on connection: Connection, withCallback: Bool = false) -> String {
        let started = ProcessInfo.processInfo.systemUptime
        let kind: String
        switch sign(withCallback: withCallback) {
        case .failure(let error):
            kind = ErrorKind.of(error)
        case .success(let signed):
            let first = deliver(signed.value(forHTTPHeaderField: "Authorization"), on: connection)
            if first == "status401" {
                tally.count("retried401")
                let asked = ProcessInfo.processInfo.systemUptime
                let again = wait { try await closure.reauthorize(signed) }
                tally.waited(ProcessInfo.processInfo.systemUptime - asked)
                switch again {
                case .failure(let error): kind = ErrorKind.of(error)
                case .success(let again):
                    kind = deliver(again.value(forHTTPHeaderField: "Authorization"), on: connection)
                }
            } else {
                kind = first
            }
        }
        tally.took(ProcessInfo.processInfo.systemUptime - started)
        tally.count(kind)
        return kind
    }

    private func sign(withCallback: Bool) -> Result<URLRequest, any Error> {
        let started = ProcessInfo.processInfo.systemUptime
        defer { tally.waited(ProcessInfo.processInfo.systemUptime - started) }
        guard withCallback else { return wait { try await closure.authorize(request) } }
        let calls = CallCount()
        let signed = Outcome()
        let tally = self.tally
        closure.authorize(request) { result in
            if calls.increment() == 1 {
                signed.complete(result)
            } else {
                tally.count("doubles")
            }
        }
        return signed.wait()
    }

    /// Runs `work` as a task and blocks this (non-pool) thread until it ends.
    private func wait(_ work: @escaping @Sendable () async throws -> URLRequest) -> Result<URLRequest, any Error> {
        let outcome = Outcome()
        Task {
            do {
                outcome.complete(.success(try await work()))
            } catch {
                outcome.complete(.failure(error))
            }
        }
        return outcome.wait()
    }

    /// Sends `GET path` with `authorization` on the loop's connection: `status<code>`, or
    /// `apiTransport` when the connection failed (it is opened again next time).
    private func deliver(_ authorization: String?, on connection: Connection) -> String {
        let head =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n"
        do {
            let client = try connection.client ?? RawHTTPClient(port: port, timeout: 20)
            connection.client = client
            try client.send(head)
            return "status\(try client.readResponse().status)"
        } catch {
            connection.client?.close()
            connection.client = nil
            return "apiTransport"
        }
    }
}

/// A signing result handed from a callback or a task to the waiting thread.
private final class Outcome: @unchecked Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private var result: Result<URLRequest, any Error> = .failure(CancellationError())

    func complete(_ result: Result<URLRequest, any Error>) {
        self.result = result
        ready.signal()
    }

    func wait() -> Result<URLRequest, any Error> {
        ready.wait()
        return result
    }
}

/// Calls of one completion.
private final class CallCount: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        calls += 1
        return calls
    }
}
