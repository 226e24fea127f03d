import Foundation

/// A fuzz target: a name, and a check that takes arbitrary bytes and returns what it found wrong
/// (nothing when all is well). A crash inside the check is a finding too.
///
/// The same checks run in two places: under libFuzzer (`Tests/Fuzz/run`), which stops at the first
/// input with a finding, and in `swift test`, which runs every committed corpus and regression
/// input through them.
struct FuzzTarget: Sendable {
    let name: String
    let check: @Sendable (Data) -> [String]
}
