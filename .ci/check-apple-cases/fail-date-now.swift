// expect: Date.now
// Xcode 16's SDK has Date.now from iOS 15 / macOS 12 on; `Date()` works everywhere.
import Foundation

func stamp() -> TimeInterval {
    Date.now.timeIntervalSince1970
}
