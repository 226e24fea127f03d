import Testing

/// Text arguments of parameterized tests are shown escaped (`"abc\r\nX-Injected: 1"`), so that
/// a header-injection case does not print as a broken line. The conformance holds for every test
/// target of the package, which share one test process.
extension String: @retroactive CustomTestStringConvertible {
    public var testDescription: String { debugDescription }
}
