// expect: waives nothing
func twice(_ x: Int) -> Int {
    x * 2  // check-apple: 32-bit safe (a stale waiver left after the conversion went away)
}
