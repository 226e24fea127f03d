import Dispatch

// Conversions that stop at the destination's bounds instead of trapping. watchOS on arm64_32 has a
// 32-bit `Int`: a conversion that fits in 64 bits traps there past 2^31 (2.1 s in nanoseconds, 24.8
// days in milliseconds). Every conversion of a floating-point value to an integer in this package
// goes through here, and every deadline is computed on Dispatch's 64-bit clock, never as a
// `.nanoseconds(Int)`; the tests run the conversions with `Int32` so that a 64-bit machine checks
// what a watch would do.

extension FixedWidthInteger {
    /// `value` rounded toward zero, or the nearest bound of `Self` when it lies beyond one; NaN is
    /// zero.
    package init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = .min
        } else if value >= Double(Self.max) {
            // `Double(Int64.max)` rounds up to 2^63, so this also catches what lies between.
            self = .max
        } else {
            self = Self(value)
        }
    }
}

extension DispatchTime {
    /// `self + seconds` on Dispatch's 64-bit clock: `self` for NaN and negative intervals,
    /// `.distantFuture` for intervals too long to hold (about 290 years and more).
    package func advanced(bySeconds seconds: Double) -> DispatchTime {
        guard seconds > 0 else { return self }
        let nanoseconds = UInt64(saturating: seconds * 1e9)
        let start = uptimeNanoseconds
        // Half the range: Darwin converts uptime nanoseconds to its own ticks, which must not overflow.
        guard start < UInt64.max / 2, nanoseconds < UInt64.max / 2 - start else { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: start + nanoseconds)
    }

    /// `now + seconds`, with the bounds of ``advanced(bySeconds:)``.
    package static func after(seconds: Double) -> DispatchTime {
        DispatchTime.now().advanced(bySeconds: seconds)
    }
}
