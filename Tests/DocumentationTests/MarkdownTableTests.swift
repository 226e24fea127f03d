// Every table of the README and of the documentation catalog must keep its shape: each row has as
// many cells as the header. A table pasted from a run whose output was interleaved with another
// line breaks a row in two; this catches it before a reader does.

import Foundation
import Testing

/// One table of a Markdown file: its rows, each with the line it starts on.
struct MarkdownTable: Sendable, CustomTestStringConvertible {
    let file: String
    let rows: [(line: Int, text: String)]

    var testDescription: String { "\(file):\(rows.first?.line ?? 0)" }

    /// The cells of `row`: split at each `|` that is neither escaped nor inside a code span.
    static func cells(of row: String) -> [String] {
        var cells: [String] = []
        var current = ""
        var inCode = false
        var escaped = false
        for character in row {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "`" {
                current.append(character)
                inCode.toggle()
            } else if character == "|" && !inCode {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        cells.append(current.trimmingCharacters(in: .whitespaces))
        // A row begins and ends with `|`: drop the empty text outside them.
        if cells.first == "" { cells.removeFirst() }
        if cells.last == "" { cells.removeLast() }
        return cells
    }

    /// Every table of `lines` (runs of lines that begin with `|`), outside fenced code.
    static func tables(in lines: [Substring], file: String) -> [MarkdownTable] {
        var tables: [MarkdownTable] = []
        var current: [(line: Int, text: String)] = []
        var fence: String?
        func close() {
            if current.count >= 2 { tables.append(MarkdownTable(file: file, rows: current)) }
            current = []
        }
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                close()
                fence = String(trimmed.prefix(3))
                continue
            }
            if trimmed.hasPrefix("|") {
                current.append((index + 1, trimmed))
            } else {
                close()
            }
        }
        close()
        return tables
    }

    /// Every table of the README and of the catalog's articles.
    static func all() -> [MarkdownTable] {
        let root = SnippetText.testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
        let readme = root.appendingPathComponent("README.md")
        let files = [readme] + SnippetText.files(in: SnippetText.catalog, endingWith: ".md")
        return files.flatMap { tables(in: SnippetText.lines(of: $0), file: $0.lastPathComponent) }
    }
}

@Suite("Markdown tables")
struct MarkdownTableTests {
    @Test("The README has tables to check")
    func thereAreTables() {
        #expect(MarkdownTable.all().contains { $0.file == "README.md" })
    }

    @Test("Every row has as many cells as its header", arguments: MarkdownTable.all())
    func rowsMatchTheHeader(_ table: MarkdownTable) {
        guard let header = table.rows.first else { return }
        let width = MarkdownTable.cells(of: header.text).count
        #expect(width >= 2, "\(table.file):\(header.line): a table needs at least two columns")
        for row in table.rows.dropFirst() {
            let count = MarkdownTable.cells(of: row.text).count
            #expect(count == width, "\(table.file):\(row.line): \(count) cells where the header has \(width)")
        }
    }

    @Test("A row cut in two is caught")
    func aBrokenRowIsCaught() {
        let text: [Substring] = [
            "| a | b | c |", "|---|---|---|", "| 1 | 2 [1-1wrote out.json |", "| 0] | 3 |",
        ]
        let tables = MarkdownTable.tables(in: text, file: "example.md")
        #expect(tables.count == 1)
        let widths = tables.first?.rows.map { MarkdownTable.cells(of: $0.text).count }
        #expect(widths == [3, 3, 2, 2])
    }

    @Test("Pipes in code spans and escaped pipes are not cell borders")
    func pipesInCode() {
        #expect(MarkdownTable.cells(of: "| `a | b` | c \\| d |") == ["`a | b`", "c \\| d"])
    }
}
