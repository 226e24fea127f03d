import Testing

/// Text handed to a parameterized test, shown in the test's output with its control characters,
/// line breaks and invisible characters escaped as Swift writes them (`"abc\r\nX-Injected: 1"`):
/// raw, they would break the output's lines or look like an injection that succeeded.
public struct EscapedText: Sendable, ExpressibleByStringLiteral, CustomTestStringConvertible {
    /// The text itself, as the test uses it.
    public let value: String

    /// The text of a literal.
    public init(stringLiteral value: String) {
        self.value = value
    }

    /// The text as a Swift string literal, escaped.
    public var testDescription: String { value.debugDescription }
}
