import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The handle other threads hold on a running event loop: how to ask it to stop and how to wait
/// until it has.
///
/// The wake pipe is closed by the stopping thread only after the loop has finished, so a wake-up
/// byte is never written to a pipe whose reading end is gone (which would raise SIGPIPE).
final class LoopControl: Sendable {
    /// The reading end of the wake pipe, polled by the loop.
    let wakeReader: Int32
    /// The writing end of the wake pipe.
    let wakeWriter: Int32
    /// Signalled once by the loop thread when it has closed every socket and is about to exit.
    let finished = DispatchSemaphore(value: 0)
    private let stopFlag = Protected(false)

    init(wakeReader: Int32, wakeWriter: Int32) {
        self.wakeReader = wakeReader
        self.wakeWriter = wakeWriter
    }

    /// Whether `requestStop()` has been called.
    var isStopRequested: Bool {
        stopFlag.withLock { $0 }
    }

    /// Asks the loop to stop and wakes it if it is waiting in `poll`.
    func requestStop() {
        stopFlag.withLock { $0 = true }
        var byte: UInt8 = 1
        // EAGAIN means the pipe is already full of wake-ups, which is just as good.
        _ = write(wakeWriter, &byte, 1)
    }

    /// Closes the wake pipe. Only after `finished` was signalled.
    func closePipe() {
        Socket.close(wakeReader)
        Socket.close(wakeWriter)
    }
}
