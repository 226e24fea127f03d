/// A failure inside the benchmark itself, not a missed goal: the run exits non-zero.
struct BenchmarkError: Error, CustomStringConvertible {
    /// What went wrong, for people; never contains a token.
    let description: String

    /// Creates the error.
    init(_ description: String) {
        self.description = description
    }
}
