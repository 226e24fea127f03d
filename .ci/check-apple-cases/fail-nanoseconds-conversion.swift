// expect: .nanoseconds(Int(seconds * 1e9))
// On watchOS (arm64_32) Int is 32 bits: 2.2 s of nanoseconds already traps.
import Dispatch

func deadline(after seconds: Double) -> DispatchTime {
    .now() + .nanoseconds(Int(seconds * 1e9))
}
