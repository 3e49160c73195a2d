import Foundation
import Testing

@testable import PipelineFile

/// Every file of the corpus (Corpus.swift) gives exactly its expected diagnostics: the same errors,
/// the same words, the same places, rendered as `capture validate` prints them.
@Suite("Diagnostics of invalid files")
struct DiagnosticsTests {
    static func diagnose(_ entry: CorpusCase) -> PipelineDiagnostics? {
        do {
            _ = try PipelineDocument.parse(
                entry.source, file: "\(entry.name).pipeline",
                options: ParseOptions(overrides: entry.overrides, baseDirectory: "/work/corpus"))
            return nil
        } catch {
            return error
        }
    }

    @Test("corpus file gives its exact diagnostics", arguments: corpus)
    func corpusFile(_ entry: CorpusCase) throws {
        let diagnostics = try #require(Self.diagnose(entry), "\(entry.name) should not parse")
        // CORPUS_DUMP=DIR writes what each file gives to DIR/NAME.txt (to review a wording change).
        if let dump = ProcessInfo.processInfo.environment["CORPUS_DUMP"] {
            try? diagnostics.rendered.write(toFile: "\(dump)/\(entry.name).txt", atomically: true, encoding: .utf8)
        }
        #expect(diagnostics.rendered == entry.expected + "\n")
    }

    @Test("every error of a file is reported, in source order", arguments: corpus)
    func allErrorsInOrder(_ entry: CorpusCase) throws {
        let diagnostics = try #require(Self.diagnose(entry)).diagnostics
        #expect(diagnostics.count == entry.expected.components(separatedBy: ": error: ").count - 1)
        let main = diagnostics.filter { $0.location.file != "--set" }.map(\.location)
        #expect(main == main.sorted())
    }

    @Test func diagnosticRendering() {
        let diagnostic = Diagnostic(location: SourceLocation(file: "f.pipeline", line: 3, column: 5), message: "bad", sourceLine: "\tab cd")
        #expect(diagnostic.rendered == "f.pipeline:3:5: error: bad\n\tab cd\n\t   ^")
        // A column past the end of the line (a missing value at the end) still gets its caret.
        let past = Diagnostic(location: SourceLocation(file: "f", line: 1, column: 6), message: "m", sourceLine: "abc")
        #expect(past.caretLine == "     ^")
        // Line 0 is the file as a whole.
        let whole = Diagnostic(location: SourceLocation(file: "f", line: 0, column: 0), message: "cannot read", sourceLine: "")
        #expect(whole.rendered == "f: error: cannot read")
    }

    @Test func caretCountsCharactersNotBytes() throws {
        let text = "overlay, output=preview, text=\"héllo\", alpha=2\ninput, name=camera, device=test-pattern\noutput, name=preview, kind=preview\n"
        #expect(throws: PipelineDiagnostics.self) { try PipelineDocument.parse(text, file: "u.pipeline") }
        do {
            _ = try PipelineDocument.parse(text, file: "u.pipeline")
        } catch {
            #expect(error.diagnostics.map(\.location.column) == [40])
            #expect(error.diagnostics[0].caretLine == String(repeating: " ", count: 39) + "^")
        }
    }
}
