import Dispatch

func deadlines() -> [DispatchTime] {
    [
        .now() + .nanoseconds(5),
        .now() + .microseconds(-20),
        .now() + .milliseconds(1_000),
        .now() + DispatchTimeInterval.nanoseconds(0x10),
    ]
}
