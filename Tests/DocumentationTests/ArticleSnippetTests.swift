// Every ```swift block of the documentation catalog and of README.md must appear, line for line,
// in one of the files under Snippets/, which this target compiles. An article whose code drifts
// from code that compiles fails here.
//
// Lines are compared with surrounding whitespace removed; blank lines, lines that are only `…` or
// `// …` (the articles' way of leaving code out), and `import` lines (the formatter moves imports
// to the top of a file, away from the code they stand over in an article) are ignored. Code that cannot compile
// here (it needs RxSwift or Moya itself) is fenced without a language in the articles, and is
// not checked.

import Foundation
import Testing

/// One ```swift block of an article.
struct ArticleSnippet: Sendable, CustomTestStringConvertible {
    /// The article's file name, such as `WhereTheTokenGoes.md`.
    let article: String
    /// The line of the opening fence, from 1.
    let line: Int
    /// The block's lines, normalized (see ``SnippetText/normalized(_:)``).
    let lines: [String]

    var testDescription: String { "\(article):\(line)" }
}

enum SnippetText {
    /// The directory of this file.
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The documentation catalog: Sources/RefreshQueue/RefreshQueue.docc, from Tests/DocumentationTests.
    static let catalog =
        testsDirectory
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Sources/RefreshQueue/RefreshQueue.docc", isDirectory: true)

    static let snippetsDirectory = testsDirectory.appendingPathComponent("Snippets", isDirectory: true)

    /// `lines` without surrounding whitespace, without blank lines, elisions and imports.
    static func normalized<S: Sequence>(_ lines: S) -> [String] where S.Element: StringProtocol {
        lines.compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed == "…" || trimmed == "// …" || trimmed.hasPrefix("import ") { return nil }
            return trimmed
        }
    }

    /// The files in `directory` (and below) whose names end with `suffix`, sorted by path.
    static func files(in directory: URL, endingWith suffix: String) -> [URL] {
        guard
            let enumerator = FileManager.default.enumerator(
                at: directory, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
        else { return [] }
        return enumerator.compactMap { $0 as? URL }
            .filter { $0.lastPathComponent.hasSuffix(suffix) }
            .sorted { $0.path < $1.path }
    }

    static func lines(of file: URL) -> [Substring] {
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// The package's README.md, from Tests/DocumentationTests.
    static let readme =
        testsDirectory
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("README.md", isDirectory: false)

    /// Every ```swift block of every article in the catalog, and of README.md.
    static func articleSnippets() -> [ArticleSnippet] {
        (files(in: catalog, endingWith: ".md") + [readme]).flatMap { article in
            swiftBlocks(in: lines(of: article), article: article.lastPathComponent)
        }
    }

    /// The ```swift blocks of one Markdown text.
    static func swiftBlocks(in lines: [Substring], article: String) -> [ArticleSnippet] {
        var blocks: [ArticleSnippet] = []
        var open: (line: Int, fence: String, isSwift: Bool, body: [Substring])?
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed.hasPrefix(block.fence), trimmed.allSatisfy({ $0 == block.fence.first }) {
                    if block.isSwift {
                        blocks.append(ArticleSnippet(article: article, line: block.line, lines: normalized(block.body)))
                    }
                    open = nil
                } else {
                    block.body.append(line)
                    open = block
                }
                continue
            }
            guard let marker = trimmed.first, marker == "`" || marker == "~" else { continue }
            let fence = String(trimmed.prefix(while: { $0 == marker }))
            guard fence.count >= 3 else { continue }
            let info = trimmed.dropFirst(fence.count).trimmingCharacters(in: .whitespaces)
            let language = info.prefix(while: { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "+" })
            open = (index + 1, fence, language.lowercased() == "swift", [])
        }
        return blocks
    }

    /// Every Snippets file, normalized.
    static let snippetFiles: [(name: String, lines: [String])] = files(in: snippetsDirectory, endingWith: ".swift")
        .map { ($0.lastPathComponent, normalized(lines(of: $0))) }

    /// Whether `needle` occurs as consecutive elements of `haystack`.
    static func contains(_ haystack: [String], contiguous needle: [String]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }

    /// The longest prefix of `needle` found consecutively somewhere in `haystack`, to say where a
    /// snippet first departs from the compiled code.
    static func longestMatchingPrefix(of needle: [String], in haystack: [String]) -> Int {
        var best = 0
        for start in haystack.indices {
            var length = 0
            while length < needle.count, start + length < haystack.count, haystack[start + length] == needle[length] {
                length += 1
            }
            best = max(best, length)
        }
        return best
    }
}

@Suite("Article snippets")
struct ArticleSnippetTests {
    @Test("The catalog has Swift snippets and the Snippets directory has files")
    func thereIsSomethingToCheck() {
        #expect(
            FileManager.default.fileExists(atPath: SnippetText.catalog.path),
            "no catalog at \(SnippetText.catalog.path)")
        #expect(!SnippetText.snippetFiles.isEmpty, "no Swift files in \(SnippetText.snippetsDirectory.path)")
        let snippets = SnippetText.articleSnippets()
        #expect(snippets.count >= 10, "only \(snippets.count) Swift blocks found in \(SnippetText.catalog.path)")
        #expect(
            snippets.contains { $0.article == "README.md" }, "no Swift blocks found in \(SnippetText.readme.path)")
        #expect(snippets.allSatisfy { !$0.lines.isEmpty }, "an empty Swift block")
    }

    @Test(
        "Each Swift snippet of an article appears verbatim in a compiled Snippets file",
        arguments: SnippetText.articleSnippets())
    func snippetIsCompiled(_ snippet: ArticleSnippet) {
        let found = SnippetText.snippetFiles.contains { file in
            SnippetText.contains(file.lines, contiguous: snippet.lines)
        }
        guard !found else { return }
        let matched =
            SnippetText.snippetFiles.map { SnippetText.longestMatchingPrefix(of: snippet.lines, in: $0.lines) }
            .max() ?? 0
        let departing = matched < snippet.lines.count ? snippet.lines[matched] : "(end of snippet)"
        Issue.record(
            """
            \(snippet.article):\(snippet.line): this ```swift block does not appear in any file of \
            Tests/DocumentationTests/Snippets. Its first \(matched) line(s) match; the first line that \
            does not: \(departing)
            """)
    }

    @Test("The fence parser finds Swift blocks and skips others")
    func fenceParser() {
        let markdown = """
            Text.

            ```swift
            let a = 1

            …
            ```

            ```
            import RxSwift
            ```

              ```swift
              // …
              let b = 2
              ```
            """
        let blocks = SnippetText.swiftBlocks(
            in: markdown.split(separator: "\n", omittingEmptySubsequences: false), article: "T.md")
        #expect(blocks.map(\.lines) == [["let a = 1"], ["let b = 2"]])
        #expect(blocks.map(\.line) == [3, 13])
        #expect(SnippetText.contains(["x", "let a = 1", "y"], contiguous: ["let a = 1", "y"]))
        #expect(!SnippetText.contains(["let a = 1", "x", "y"], contiguous: ["let a = 1", "y"]))
    }
}
