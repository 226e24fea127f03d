import Foundation

extension Date {
    /// This moment rounded to a multiple of 2⁻²⁰ s (about a microsecond) after 2001, Foundation's
    /// reference date. Such a moment survives being written as seconds since 1970 (a JSON number,
    /// as the stores write dates) and read back, bit for bit: adding and removing the 31 years
    /// between 1970 and 2001 loses nothing. Another moment may come back a hair off, and a token
    /// read from a store would not be `==` to the one saved. Moments more than 2³² s (about 136
    /// years) from 2001 either way are left as they are.
    var exactlyStorable: Date {
        let seconds = timeIntervalSinceReferenceDate
        guard abs(seconds) < Self.gridLimit else { return self }
        let steps = (seconds * Self.stepsPerSecond).rounded()
        return Date(timeIntervalSinceReferenceDate: steps / Self.stepsPerSecond)
    }

    /// 2³² s, about 136 years: within it, a moment on the grid plus the 31 years fits a double's
    /// 53 bits exactly.
    private static let gridLimit: Double = 4_294_967_296

    private static let stepsPerSecond: Double = 1_048_576
}
