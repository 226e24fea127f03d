// expect: Int(min(a, 1e15))
func capped(_ a: Double) -> Int {
    Int(min(a, 1e15))
}
