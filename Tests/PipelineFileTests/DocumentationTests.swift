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

/// What the vocabulary has that a document does not mention, and the sentences of a document that say
/// a statement of the vocabulary does not exist yet. Pure: tests plant words to see it fail.
enum VocabularyCoverage {
    /// The words of the `.pipeline` format, each with where it belongs: "statement X", "key X of Y",
    /// "event X", "error X".
    static func words(
        statements: [String] = Vocabulary.statements, keys: [String: [String]] = statementKeys(), events: [String] = Vocabulary.events,
        errors: [String] = Vocabulary.errorNames
    ) -> [(word: String, what: String)] {
        statements.map { ($0, "statement \($0)") }
            + keys.sorted { $0.key < $1.key }.flatMap { statement, keys in keys.map { ($0, "key \($0) of \(statement)") } }
            + events.map { ($0, "event \($0)") } + errors.map { ($0, "error \($0)") }
    }

    /// Every statement's keys (an `output`'s: the common keys and every kind's).
    static func statementKeys() -> [String: [String]] {
        var keys = Vocabulary.actionKeys
        keys["session"] = Vocabulary.sessionKeys
        keys["input"] = Vocabulary.inputKeys
        keys["output"] = Vocabulary.outputCommonKeys + OutputKind.allCases.flatMap { Vocabulary.outputKindKeys[$0] ?? [] }
        keys["overlay"] = Vocabulary.overlayKeys
        keys["add-input"] = Vocabulary.inputKeys
        keys["add-output"] = keys["output"]
        return keys
    }

    /// The words `document` never writes as code (`` `word` `` or `` `word=... ``).
    static func undocumented(_ words: [(word: String, what: String)], in document: String) -> [String] {
        words.filter { !document.contains("`\($0.word)`") && !document.contains("`\($0.word)=") }.map(\.what)
    }

    /// Sentences that say a statement of `statements` is missing ("not available yet", "no statement").
    static func claimsOfAbsence(in document: String, statements: [String] = Vocabulary.statements) -> [String] {
        let absent = ["not available yet", "no statements yet", "no statement yet", "has no statement", "have no statement", "not yet supported"]
        let sentences = document.replacingOccurrences(of: "\n", with: " ").components(separatedBy: ". ")
        return sentences.filter { sentence in
            let lower = sentence.lowercased()
            return absent.contains { lower.contains($0) } && statements.contains { sentence.contains("`\($0)`") || lower.contains(" \($0) ") }
        }
    }
}

/// The documents keep up with the vocabulary and the CLI (issue 29: "docs that say what is true").
@Suite struct VocabularyDocumentationTests {
    static let format = (try? DocumentationTests.read("docs/pipeline-format.md")) ?? ""

    /// Every statement, key, event and error name of the `.pipeline` vocabulary is in
    /// docs/pipeline-format.md.
    @Test func everyWordOfTheVocabularyIsDocumented() {
        #expect(!Self.format.isEmpty)
        #expect(VocabularyCoverage.undocumented(VocabularyCoverage.words(), in: Self.format) == [])
    }

    /// No document says a statement the vocabulary has is missing.
    @Test func noDocumentClaimsAStatementIsMissing() throws {
        let folder = DocumentationTests.root.appendingPathComponent("docs")
        var documents = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        documents += ["README.md", "Sources/Capture/Capture.docc/Recipes.md", "Sources/PipelineFile/PipelineFile.docc/PipelineFile.md"]
        for document in documents {
            #expect(VocabularyCoverage.claimsOfAbsence(in: try DocumentationTests.read(document)) == [], "\(document)")
        }
    }

    /// The checks fail when they should: a statement, a key and an event planted in the vocabulary
    /// (and nowhere in the document) are reported; a sentence calling a real statement missing is.
    @Test func thePlantedWordsAreCaught() {
        let planted = VocabularyCoverage.words(
            statements: Vocabulary.statements + ["plant-statement"], keys: ["trim-video": ["plant-key"]], events: ["plant-event"], errors: [])
        #expect(VocabularyCoverage.undocumented(planted, in: Self.format) == ["statement plant-statement", "key plant-key of trim-video", "event plant-event"])
        let claim = "Trimming has no statements yet: it is `capture trim` and `trim-video` is coming."
        #expect(VocabularyCoverage.claimsOfAbsence(in: claim).count == 1)
        #expect(VocabularyCoverage.claimsOfAbsence(in: "The `overlay` statement draws text.").isEmpty)
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

    /// Every folder of Sources, with each Swift, C and header file in it.
    static func everySource() throws -> [(path: String, text: String)] {
        let root = DocumentationTests.root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var files: [(String, String)] = []
        for case let relative as String in walker where [".swift", ".c", ".h", ".cpp"].contains(where: { relative.hasSuffix($0) }) {
            files.append(("Sources/\(relative)", try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files
    }

    /// A file's lines without their `//` comments (a comment may name what the code must not use).
    static func code(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("//") || trimmed.hasPrefix("*") || trimmed.hasPrefix("/*") { return "" }
            // A comment after the code (" // ..."; a URL's "://" has no space before it).
            if let comment = line.range(of: " //") { return String(line[..<comment.lowerBound]) }
            return String(line)
        }
    }

    /// The network surfaces know no `.pipeline` syntax: the HTTP server and the MQTT client import
    /// neither PipelineFile nor anything that does; MQTT reads its commands through the
    /// `ControlCommandReader` it is given.
    @Test func theNetworkSurfacesDoNotImportThePipelineFormat() throws {
        var offenders: [String] = []
        for (path, text) in try Self.everySource() where path.hasPrefix("Sources/CaptureServer/") || path.hasPrefix("Sources/CaptureMQTT/") {
            if Self.code(text).contains(where: { $0.hasPrefix("import PipelineFile") || $0.hasPrefix("@testable import PipelineFile") }) {
                offenders.append(path)
            }
        }
        #expect(offenders.isEmpty, "these files of a network surface import PipelineFile: \(offenders)")
        let manifest = try String(contentsOf: DocumentationTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for target in ["CaptureServer", "CaptureMQTT"] {
            let line = manifest.split(separator: "\n").first { $0.contains(".target(name: \"\(target)\"") }
            #expect(line != nil && !line!.contains("\"PipelineFile\""), "\(target) depends on PipelineFile: \(line ?? "no line")")
        }
    }

    /// Every lock is a `Locked` (a pthread mutex ThreadSanitizer sees, Sources/Locking/Locked.swift):
    /// never `Synchronization.Mutex` (on Linux ThreadSanitizer cannot see it, and `make tsan` would
    /// report every hand-off through one), `NSLock`, `os_unfair_lock` or a bare pthread mutex.
    @Test func everyLockIsALocked() throws {
        let other = try Regex(#"\bMutex\s*[<(]|\bNSLock\b|\bNSRecursiveLock\b|os_unfair_lock|pthread_mutex_t|pthread_mutex_lock"#)
        var offenders: [String] = []
        for (path, text) in try Self.everySource() where path.hasSuffix(".swift") && !path.hasPrefix("Sources/Locking/") {
            if Self.code(text).contains(where: { $0.contains(other) }) { offenders.append(path) }
        }
        #expect(offenders.isEmpty, "these files lock with something else than Locked: \(offenders)")
        #expect(try Self.everySource().contains { $0.path == "Sources/Locking/Locked.swift" && $0.text.contains("pthread_mutex_t") })
    }

    /// The places that wait on a thread (a semaphore, a condition, a group) or run a GLib main loop are
    /// the ones docs/architecture.md lists under "Locks and waits", no more and no fewer.
    @Test func theWaitsAreTheOnesTheArchitectureLists() throws {
        let waits = try Regex(#"DispatchSemaphore\(|NSCondition\(|DispatchGroup\(|\bGMutex\b|\bGCond\b|g_main_loop_new"#)
        var inCode: Set<String> = []
        for (path, text) in try Self.everySource() {
            if Self.code(text).contains(where: { $0.contains(waits) }) { inCode.insert(path) }
        }
        let architecture = try String(contentsOf: DocumentationTests.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let section = try #require(architecture.components(separatedBy: "### Locks and waits").dropFirst().first)
        let table = section.components(separatedBy: "\n\n").dropFirst(2).first ?? ""
        let listed = Set(
            table.split(separator: "\n").compactMap { row -> String? in
                guard row.hasPrefix("| `Sources/"), let end = row.dropFirst(3).firstIndex(of: "`") else { return nil }
                return String(row[row.index(row.startIndex, offsetBy: 3)..<end])
            })
        #expect(!listed.isEmpty, "the table of docs/architecture.md was not found")
        #expect(inCode.subtracting(listed).sorted() == [], "waits in the code that docs/architecture.md does not list")
        #expect(listed.subtracting(inCode).sorted() == [], "waits docs/architecture.md lists that the code no longer has")
    }

    /// No function declared `async` calls a blocking wait directly (a semaphore's or a process's
    /// `wait()`, `usleep`, `sleep`, `waitpid`): it would hold one of the cooperative pool's few threads.
    /// A wait inside a closure handed to a thread or a queue is not the function's.
    @Test func noAsyncFunctionBlocksItsThread() throws {
        let blocking = try Regex(#"\.wait\(\)|\.wait\(timeout|\busleep\(|Thread\.sleep|(?:^|[^.\w])sleep\(|\.waitUntilExit\(|\bwaitpid\("#)
        let declaration = try Regex(#"\bfunc\b|\binit\s*[(<]|\bdeinit\b"#)
        let hop = try Regex(#"Thread\s*\{|Thread\(block:|\.async\s*\{|DispatchQueue.*\.async|onOwnThread"#)
        var offenders: [String] = []
        for (path, text) in try Self.everySource() where path.hasSuffix(".swift") {
            let lines = Self.code(text)
            for (index, line) in lines.enumerated() where line.contains(blocking) && !line.contains("await ") {
                var scan = index
                var hopped = false
                while scan >= 0 && !lines[scan].contains(declaration) {
                    if lines[scan].contains(hop) { hopped = true }
                    scan -= 1
                }
                if scan >= 0 && lines[scan].contains(" async") && !hopped { offenders.append("\(path):\(index + 1)") }
            }
        }
        #expect(offenders.isEmpty, "blocking waits in async functions: \(offenders)")
    }
}
