#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// One client connection: its buffers and where it is in the request/response cycle.
///
/// Owned and touched only by the event-loop thread, so it needs no locking. The loop tells it
/// when its socket is readable or writable, or when a timer it asked for fires; the connection
/// does the I/O, parses requests, asks the router what to do, and marks itself closed. The loop
/// sweeps closed connections out after each round.
///
/// Requests are answered strictly in order. While one is being answered late (token latency)
/// or never (`hang`), later pipelined requests wait in the input buffer.
final class Connection {
    /// Where the connection is in its lifecycle.
    private enum Phase {
        /// Free to parse and answer the next request.
        case ready
        /// Waiting for the timer of a delayed answer; `sequence` identifies which one, and
        /// `framing` remembers how the request wants its answer sent.
        case awaitingReply(sequence: UInt64, framing: ReplyFraming)
        /// A request that will never be answered (the `hang` fault).
        case hanging
        /// Write what is queued, then close.
        case closingAfterWrite
        /// Our side is shut down; reading and discarding until the client closes. See `linger()`.
        case lingering
        case closed
    }

    /// The socket.
    let descriptor: Int32
    private var phase = Phase.ready
    private var input: [UInt8] = []
    /// Bytes of `input` before this index are already consumed.
    private var inputStart = 0
    private var output: [UInt8] = []
    /// Bytes of `output` before this index are already sent.
    private var outputStart = 0
    /// The client has shut down its sending side (or closed).
    private var peerFinishedSending = false
    private var continueSent = false
    private var replySequence: UInt64 = 0
    private var lingerDiscarded = 0

    /// The most a connection buffers unparsed: the largest acceptable request plus slack, so a
    /// client pipelining faster than it is answered is throttled by TCP instead of by memory.
    static let maximumBufferedInput = HTTPParser.maximumHeaderBytes + HTTPParser.maximumBodyBytes + 64 * 1024
    /// Above this much unsent output, no further pipelined requests are parsed until the client
    /// reads.
    static let maximumBufferedOutput = 256 * 1024
    /// How long a closing connection waits for the client to close its side.
    static let lingerTimeout: Double = 2
    /// How many bytes a closing connection reads and discards before giving up on the client.
    static let lingerLimit = 4 * 1024 * 1024

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Whether the socket is closed and the connection can be dropped.
    var isClosed: Bool {
        if case .closed = phase {
            return true
        }
        return false
    }

    /// The poll events this connection is interested in.
    var pollEvents: Int16 {
        var events: Int16 = 0
        if wantsToRead {
            events |= Int16(truncatingIfNeeded: POLLIN)
        }
        if outputStart < output.count {
            events |= Int16(truncatingIfNeeded: POLLOUT)
        }
        return events
    }

    private var wantsToRead: Bool {
        switch phase {
        case .closed, .closingAfterWrite:
            return false
        case .lingering:
            return true
        case .ready, .awaitingReply, .hanging:
            // Keep reading while hanging or waiting: that is how a client giving up is noticed.
            return !peerFinishedSending && input.count - inputStart < Connection.maximumBufferedInput
        }
    }

    // MARK: - Events from the loop

    /// The socket is readable, or poll reported an error or hang-up on it.
    func handleReadable(scratch: UnsafeMutableRawBufferPointer, loop: EventLoop) {
        if case .lingering = phase {
            drainWhileLingering(scratch: scratch)
            return
        }
        guard wantsToRead else {
            handleHangUp(loop: loop)
            return
        }
        // A bounded number of reads per round keeps one fast client from starving the others.
        var reads = 0
        reading: while reads < 16, wantsToRead {
            let room = min(scratch.count, Connection.maximumBufferedInput - (input.count - inputStart))
            switch Socket.read(descriptor, into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<room])) {
            case .transferred(let count):
                input.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                reads += 1
            case .endOfFile:
                peerFinishedSending = true
                break reading
            case .wouldBlock:
                break reading
            case .failed:
                close()
                return
            }
        }
        if peerFinishedSending, case .hanging = phase {
            // The client gave up on the hung request: release it.
            close()
            return
        }
        advance(loop: loop)
    }

    /// Poll reported a hang-up or error while we were not reading: send what can still be sent,
    /// otherwise there is nothing left to do with this socket.
    func handleHangUp(loop: EventLoop) {
        if outputStart < output.count {
            flush()
            if !isClosed && outputStart < output.count {
                close()
            }
            if !isClosed {
                advance(loop: loop)
            }
        } else {
            close()
        }
    }

    /// The socket is writable.
    func handleWritable(loop: EventLoop) {
        flush()
        advance(loop: loop)
    }

    /// The timer for a delayed answer fired; `outcome` is the answer.
    func deliver(_ outcome: Outcome, sequence: UInt64, loop: EventLoop) {
        guard case .awaitingReply(let expected, let framing) = phase, expected == sequence else {
            return
        }
        phase = .ready
        apply(outcome, framing: framing)
        advance(loop: loop)
    }

    /// The linger timer fired: the client had its chance to close first.
    func lingerExpired() {
        if case .lingering = phase {
            close()
        }
    }

    /// Closes the socket now. Safe to call more than once.
    func close() {
        if isClosed {
            return
        }
        Socket.close(descriptor)
        phase = .closed
        input = []
        output = []
        inputStart = 0
        outputStart = 0
    }

    // MARK: - Request cycle

    /// Answers every complete buffered request that can be answered now, writes, and closes or
    /// lingers when the conversation is over.
    private func advance(loop: EventLoop) {
        while true {
            var throttled = false
            parsing: while case .ready = phase {
                guard output.count - outputStart < Connection.maximumBufferedOutput else {
                    throttled = true
                    break parsing
                }
                switch HTTPParser.parse(input, from: inputStart) {
                case .incomplete(let expectsContinue):
                    if expectsContinue && !continueSent {
                        continueSent = true
                        output += HTTPResponse.continueBytes
                    }
                    break parsing
                case .failure(let error):
                    input = []
                    inputStart = 0
                    let response = HTTPResponse.text(status: error.status, error.message)
                    output += response.serialized(closing: true, announceKeepAlive: false)
                    phase = .closingAfterWrite
                case .complete(let request, let end):
                    inputStart = end
                    continueSent = false
                    compactInput()
                    dispatch(request, loop: loop)
                }
            }
            flush()
            guard !isClosed, outputStart == output.count else {
                return
            }
            // The backlog that stopped parsing is gone: answer the rest of the pipeline.
            if throttled, case .ready = phase {
                continue
            }
            break
        }
        switch phase {
        case .closingAfterWrite:
            linger(loop: loop)
        case .ready where peerFinishedSending:
            // Everything the client sent has been answered (a partial request at EOF never will be).
            close()
        default:
            break
        }
    }

    private func dispatch(_ request: HTTPRequest, loop: EventLoop) {
        let framing = ReplyFraming(request)
        switch loop.router.route(request) {
        case .immediately(let outcome):
            apply(outcome, framing: framing)
        case .after(let seconds, let produce):
            replySequence += 1
            phase = .awaitingReply(sequence: replySequence, framing: framing)
            loop.scheduleReply(for: self, sequence: replySequence, after: seconds, produce: produce)
        }
    }

    private func apply(_ outcome: Outcome, framing: ReplyFraming) {
        switch outcome {
        case .respond(let response):
            output += response.serialized(
                closing: !framing.keepAlive, announceKeepAlive: framing.announceKeepAlive,
                sentBodyBytes: framing.omitsBody ? 0 : nil)
            phase = framing.keepAlive ? .ready : .closingAfterWrite
        case .truncate(let response):
            // No `Connection: close`: this models a keep-alive connection dropping mid-body.
            output += response.serialized(
                closing: false, announceKeepAlive: false,
                sentBodyBytes: framing.omitsBody ? 0 : response.body.count / 2)
            phase = .closingAfterWrite
        case .closeWithoutResponse:
            if outputStart == output.count {
                // A reset rather than a FIN: clients then report the connection as lost
                // (URLError.networkConnectionLost on both Darwin and Linux) instead of a bad response.
                Socket.reset(descriptor)
                close()
            } else {
                // Earlier pipelined answers still go out; this request gets nothing.
                phase = .closingAfterWrite
            }
        case .hang:
            phase = .hanging
        }
    }

    /// Starts a lingering close (RFC 9112 §9.6): send FIN, then keep reading until the client
    /// closes. Closing outright while the client is still sending (a 413 body, pipelined
    /// requests) makes the kernel answer with RST, which can destroy the response before the
    /// client has read it.
    private func linger(loop: EventLoop) {
        input = []
        inputStart = 0
        Socket.shutdownWrite(descriptor)
        phase = .lingering
        loop.scheduleLingerTimeout(for: self, after: Connection.lingerTimeout)
    }

    private func drainWhileLingering(scratch: UnsafeMutableRawBufferPointer) {
        while true {
            switch Socket.read(descriptor, into: scratch) {
            case .transferred(let count):
                lingerDiscarded += count
                if lingerDiscarded > Connection.lingerLimit {
                    close()
                    return
                }
            case .wouldBlock:
                return
            case .endOfFile, .failed:
                close()
                return
            }
        }
    }

    // MARK: - Buffers

    private func flush() {
        while !isClosed && outputStart < output.count {
            let result = output.withUnsafeBytes { bytes in
                Socket.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[outputStart...]))
            }
            switch result {
            case .transferred(let count):
                outputStart += count
            case .wouldBlock, .endOfFile:
                return
            case .failed:
                close()
                return
            }
        }
        if !isClosed {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputStart = 0
        }
    }

    private func compactInput() {
        if inputStart == input.count {
            input.removeAll(keepingCapacity: input.capacity <= 64 * 1024)
            inputStart = 0
        } else if inputStart >= 64 * 1024 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }
}
