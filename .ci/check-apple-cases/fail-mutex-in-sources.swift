// expect: Synchronization.Mutex
// Mutex is iOS 18 / macOS 15 / tvOS 18 / watchOS 11.
import Synchronization

final class Box: Sendable {
    let value = Mutex(0)
}
