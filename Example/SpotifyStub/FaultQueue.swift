/// The faults waiting to be applied to upcoming token requests, in injection order.
///
/// Stored as runs of (fault, remaining) rather than one entry per request, so that
/// `injectFaults(.hang, count: .max)` costs nothing.
struct FaultQueue {
    private var runs: [(fault: Fault, remaining: Int)] = []

    /// Appends `count` occurrences of `fault` after those already queued.
    mutating func append(_ fault: Fault, count: Int) {
        guard count > 0 else {
            return
        }
        runs.append((fault: fault, remaining: count))
    }

    /// Takes the fault for the next token request, if any.
    mutating func next() -> Fault? {
        guard let first = runs.first else {
            return nil
        }
        if first.remaining <= 1 {
            runs.removeFirst()
        } else {
            runs[0].remaining -= 1
        }
        return first.fault
    }
}
