import Dispatch

/// Seconds on a clock that never jumps.
///
/// Token lifetimes and artificial latency are measured on this clock so that a wall-clock change
/// (NTP, a developer fiddling with the date) cannot expire or revive a token mid-test. The origin
/// is arbitrary; only differences mean anything.
enum MonotonicClock {
    /// The current reading, in seconds.
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1_000_000_000
    }
}
