// expect: needs its reason
func whole(_ x: Double) -> Int {
    Int(x.rounded())  // check-apple: 32-bit safe
}
