// expect: Int(x.rounded())
func whole(_ x: Double) -> Int {
    Int(x.rounded())
}
