import Foundation

func conversions(_ seconds: Double, _ count: Int) -> [Int64] {
    let a = Int64(saturating: seconds * 1e9)
    let b = Int64(exactly: 0.5) ?? 0
    let c = Int64(count * 1_000_000)
    let d = Int64(clamping: count)
    let e = Int64(truncatingIfNeeded: UInt64(0x1e9))
    let half = count / 2
    return [a, b, c, d, e, Int64(half)]
}
