import Dispatch

extension DispatchQueue {
    /// A serial queue of the library's own for deadlines whose work is short (cancelling a
    /// transfer): unlike the global pool, whose threads a `refresh()` or other code that blocks may
    /// all have taken, a queue of its own always gets a thread, so a deadline is kept on time.
    static let refreshQueueDeadlines = DispatchQueue(label: "RefreshQueue.deadlines")
}
