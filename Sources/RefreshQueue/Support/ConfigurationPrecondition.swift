// Invalid configuration is a programmer error, reported where the value is given: the program
// stops with a message that names the option, what it allows, and what it was given. Values a
// program receives (stored data, a server's answers) are never checked this way: they fail with
// thrown errors. The Errors article states the rule for users.

/// Stops the program unless `isValid`, naming `option`, what it allows and what it was given.
package func requireValidConfiguration(
    _ isValid: Bool, _ option: @autoclosure () -> String, mustBe allowed: @autoclosure () -> String,
    given value: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    precondition(
        isValid, "RefreshQueue: \(option()) must be \(allowed()), not \(value())", file: file, line: line)
}

/// Stops the program unless `seconds` is finite and above zero.
package func requirePositiveSeconds(
    _ seconds: Double, _ option: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    requireValidConfiguration(
        seconds.isFinite && seconds > 0, option(), mustBe: "a finite number of seconds above zero",
        given: "\(seconds)", file: file, line: line)
}

/// Stops the program unless `seconds` is finite and zero or more.
package func requireNonNegativeSeconds(
    _ seconds: Double, _ option: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    requireValidConfiguration(
        seconds.isFinite && seconds >= 0, option(), mustBe: "a finite number of seconds, zero or more",
        given: "\(seconds)", file: file, line: line)
}

/// Stops the program unless `text` holds something other than white space.
package func requireText(
    _ text: String, _ option: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    requireValidConfiguration(
        text.contains { !$0.isWhitespace }, option(), mustBe: "a non-empty text", given: "\"\(text)\"",
        file: file, line: line)
}
