import Foundation
import Testing

/// The planted bugs of `Tests/Mutation/mutants.txt` stay plantable: each names a file that exists
/// and text found in it exactly once, so that a change to the code cannot quietly turn a mutant
/// into one the mutation run skips as invalid.
@Suite("Mutant list", .timeLimit(.minutes(1)))
struct MutantListTests {
    struct Mutant {
        var promise: String
        var fields: [String: String] = [:]
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The list's blocks: `promise:`, `file:`, `find:` and `replace:` lines, the last two continued
    /// on the lines that follow them up to a blank line.
    static func mutants() throws -> [Mutant] {
        let text = try String(
            contentsOf: root.appendingPathComponent("Tests/Mutation/mutants.txt"), encoding: .utf8)
        var mutants: [Mutant] = []
        var field: String?
        for line in text.components(separatedBy: "\n") where !line.hasPrefix("#") {
            if line.hasPrefix("promise: ") {
                mutants.append(Mutant(promise: String(line.dropFirst("promise: ".count))))
                field = nil
            } else if let name = ["file", "find", "replace"].first(where: { line.hasPrefix($0 + ": ") }),
                !mutants.isEmpty
            {
                mutants[mutants.count - 1].fields[name] = String(line.dropFirst(name.count + 2))
                field = name
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                field = nil
            } else if let field, field != "file", !mutants.isEmpty {
                mutants[mutants.count - 1].fields[field, default: ""] += "\n" + line
            }
        }
        return mutants
    }

    @Test func everyMutantFindsItsTextExactlyOnce() throws {
        let mutants = try Self.mutants()
        #expect(mutants.count >= 20)
        for mutant in mutants {
            guard let file = mutant.fields["file"], let find = mutant.fields["find"], mutant.fields["replace"] != nil
            else {
                Issue.record("\(mutant.promise): lacks file, find or replace")
                continue
            }
            let source = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            #expect(source.components(separatedBy: find).count == 2, "\(mutant.promise): not once in \(file)")
        }
    }

    /// The maintainers' README counts the planted bugs as the list holds them.
    @Test func theReadmeCountsEveryMutant() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("Tests/README.md"), encoding: .utf8)
        let count = try Self.mutants().count
        #expect(readme.contains("(`Tests/Mutation/run`): \(count) small, plausible bugs"))
    }
}
