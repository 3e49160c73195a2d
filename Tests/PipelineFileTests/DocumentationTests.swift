import Capture
import Foundation
import Testing

@testable import PipelineFile

/// The documents say what the code does: the lists in docs/ are checked against the code they describe.
@Suite struct DocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// `CaptureError.allNames` holds one name per case that Errors.swift declares (the `name` switch is
    /// exhaustive, but the list beside it is not checked by the compiler).
    @Test func theListOfErrorNamesHasOneNamePerDeclaredCase() throws {
        let source = try Self.read("Sources/Capture/Session/Errors.swift")
        let declared = source.split(separator: "\n").compactMap { line -> String? in
            // `    case deviceBusy(id: String, ...)` (declarations), not `        case .deviceBusy: ...` (switches).
            guard line.hasPrefix("    case "), !line.hasPrefix("     ") else { return nil }
            let name = line.dropFirst("    case ".count).prefix { $0.isLetter || $0.isNumber }
            return name.isEmpty ? nil : String(name)
        }
        let kebab = declared.map { name in
            name.reduce(into: "") { result, character in
                if character.isUppercase { result += "-" + character.lowercased() } else { result.append(character) }
            }
        }
        #expect(!declared.isEmpty)
        #expect(kebab == CaptureError.allNames)
        #expect(Set(CaptureError.allNames).count == CaptureError.allNames.count)
    }

    /// Each error's `name` is in the list (spot checks of cases with and without payloads).
    @Test func namesOfErrorsAreInTheList() {
        let errors: [CaptureError] = [
            .deviceBusy(id: "x", detail: ""), .recordingInProgress(output: "m", location: "a.mp4"), .commitWithoutBegin,
            .metadataObjectTypeNotAvailable(type: "qr", object: "m", backend: "zbar", available: []), .diskFull(path: "/"),
        ]
        for error in errors { #expect(CaptureError.allNames.contains(error.name), "\(error.name)") }
    }

    /// docs/pipeline-format.md's table of error names lists exactly what `expect-error=` accepts.
    @Test func theFormatDocumentListsEveryErrorName() throws {
        let document = try Self.read("docs/pipeline-format.md")
        guard let start = document.range(of: "#### Error names") else {
            Issue.record("docs/pipeline-format.md has no '#### Error names' section")
            return
        }
        let section = document[start.upperBound...]
        var documented: [String] = []
        for line in section.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            if line.hasPrefix("#") { break }
            // Table rows: | `name` | meaning |
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { continue }
            documented.append(String(line[line.index(line.startIndex, offsetBy: 3)..<end]))
        }
        #expect(documented == Vocabulary.errorNames)
    }
}

/// Rules of the code base that the compiler does not check.
@Suite struct SourceRulesTests {
    /// Every Swift file under a folder of Sources, with its text.
    static func sources(under folder: String) throws -> [(path: String, text: String)] {
        let root = DocumentationTests.root.appendingPathComponent("Sources/\(folder)")
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var files: [(String, String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            files.append(("Sources/\(folder)/\(relative)", try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files
    }

    /// The live graph is built from element specs, never from gst-launch text, so no user value (a file
    /// name, a tag, a device path) can reach GStreamer's parser. Only the benchmarks' fixed peers and
    /// the GStreamer wrappers' own tests may parse descriptions.
    @Test func nothingThatRunsASessionParsesLaunchText() throws {
        var offenders: [String] = []
        for folder in ["Capture", "PipelineFile", "capture", "Barcodes", "CaptureServer"] {
            for (path, text) in try Self.sources(under: folder) where text.contains("Bin.parse(") || text.contains("gst_parse_") {
                offenders.append(path)
            }
        }
        #expect(offenders.isEmpty, "these files parse launch text: \(offenders)")
        #expect(try !Self.sources(under: "Capture").isEmpty)
    }

    /// State shared between threads is behind `Locked` (a pthread mutex), never a `Synchronization.Mutex`:
    /// on Linux ThreadSanitizer cannot see a `Mutex`, and `make tsan` would report every hand-off
    /// through one (Sources/Locking/Locked.swift).
    @Test func everyLockIsOneThreadSanitizerSees() throws {
        let mutex = try Regex(#"\bMutex\s*[<(]"#)
        var offenders: [String] = []
        for folder in ["Locking", "Capture", "PipelineFile", "capture", "Barcodes", "GStreamer", "CaptureBenchmarks", "CaptureTestSupport", "CaptureServer"] {
            for (path, text) in try Self.sources(under: folder) where text.contains(mutex) {
                offenders.append(path)
            }
        }
        #expect(offenders.isEmpty, "these files use Synchronization.Mutex: \(offenders)")
    }
}
