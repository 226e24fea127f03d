import Foundation
import Testing

/// Every committed fuzz input — the seed corpora and every input that ever made a fuzz target
/// fail (`Regressions/<target>/`) — through the same checks the fuzzer runs.
@Suite("Fuzz corpora and regressions", .timeLimit(.minutes(2)))
struct FuzzRegressionTests {
    static let targets = LibraryFuzzTargets.all + StubFuzzTargets.all + RedisFuzzTargets.all
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    static func inputs(of target: String, in folder: String) -> [URL] {
        let url = directory.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { url.appendingPathComponent($0) }
    }

    @Test(arguments: targets.map(\.name))
    func everyCommittedInputPassesItsTarget(_ name: String) throws {
        let target = try #require(Self.targets.first { $0.name == name })
        let seeds = Self.inputs(of: name, in: "Corpus")
        #expect(!seeds.isEmpty, "no seed corpus for \(name)")
        for input in seeds + Self.inputs(of: name, in: "Regressions") {
            let findings = target.check(try Data(contentsOf: input))
            #expect(findings.isEmpty, "\(input.lastPathComponent): \(findings)")
        }
    }

    @Test func everyCorpusAndRegressionFolderNamesATarget() throws {
        let names = Set(Self.targets.map(\.name))
        for folder in ["Corpus", "Regressions"] {
            let url = Self.directory.appendingPathComponent(folder)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
                #expect(names.contains(entry), "\(folder)/\(entry) names no fuzz target")
            }
        }
    }
}
