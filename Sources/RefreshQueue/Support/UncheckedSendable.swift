/// Carries a value that is not `Sendable` across a concurrency boundary that the compiler cannot
/// check, where the surrounding code guarantees it is used safely.
///
/// Used for completion handlers of APIs that predate strict concurrency (Moya's
/// `RequestResultClosure`), which those APIs themselves call from arbitrary threads, and for the
/// transfers' deadline timer (a `DispatchSourceTimer`, whose methods are thread-safe).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
