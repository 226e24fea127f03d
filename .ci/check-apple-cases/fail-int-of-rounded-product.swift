// expect: Int((a * 1000).rounded())
func milliseconds(_ a: Double) -> Int {
    Int((a * 1000).rounded())
}
