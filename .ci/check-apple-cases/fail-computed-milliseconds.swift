// expect: .milliseconds(timeout)
import Dispatch

func wait(_ group: DispatchGroup, timeout: Int) -> DispatchTimeoutResult {
    group.wait(timeout: .now() + .milliseconds(timeout))
}
