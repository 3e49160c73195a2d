import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import PipelineFile

/// Feeds thousands of mutated files to the parser: it must answer every one (a document or located
/// diagnostics) without crashing or hanging, and whatever it accepts must write back to an equal document.
@Suite("Fuzzing the parser")
struct FuzzTests {
    /// Valid files, whose mutants often stay valid (exercising the round trip), and the invalid corpus.
    static let validSeeds: [String] = [
        contractExample, everyFeature, RunnerTests.camera + "start\nwait, duration=1\nstop\n",
        RunnerTests.camera
            + "start\nrepeat, count=2, actions={ \"add-output, name=x, kind=frames\", \"remove-output, name=x\" }\nexpect, event=frame-saved, at-least=1\n",
    ]
    static let seeds: [String] = validSeeds + corpus.map(\.source)

    /// Even iterations mutate a valid file, odd ones any file.
    static func seed(_ iteration: Int) -> String {
        iteration % 2 == 0 ? validSeeds[(iteration / 2) % validSeeds.count] : seeds[(iteration / 2) % seeds.count]
    }

    static let mutator = TextMutator(seeds: seeds)
    static func mutate(_ text: String, _ random: inout SplitMix64) -> [UInt8] { mutator.mutate(text, &random) }

    @Test func mutatedFilesGetDiagnosticsOrRoundTrip() throws {
        var random = SplitMix64(seed: 0x5EED_CA9_7E5)
        let options = ParseOptions(baseDirectory: "/fuzz", checksFileDevices: false)
        var accepted = 0, rejected = 0
        for iteration in 0..<4000 {
            let bytes = Self.mutate(Self.seed(iteration), &random)
            let text = String(decoding: bytes, as: UTF8.self)
            if Self.check(text, options: options, iteration: iteration) { accepted += 1 } else { rejected += 1 }
        }
        // Both paths are exercised. (Speed is the soak's business: `capture soak --fuzz` reports the
        // slowest input; a test never asserts a duration.)
        #expect(accepted > 200 && rejected > 2000, "accepted \(accepted), rejected \(rejected)")
    }

    /// True when the text parsed (and then wrote back faithfully); false when it gave well-formed diagnostics.
    static func check(_ text: String, options: ParseOptions, iteration: Int) -> Bool {
        let document: PipelineDocument
        do {
            document = try PipelineDocument.parse(text, file: "fuzz.pipeline", options: options)
        } catch {
            let lineCount = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
            #expect(!error.diagnostics.isEmpty)
            for diagnostic in error.diagnostics {
                #expect(diagnostic.location.file == "fuzz.pipeline")
                #expect((1...lineCount).contains(diagnostic.location.line), "iteration \(iteration): \(diagnostic.rendered)")
                #expect(diagnostic.location.column >= 1)
                #expect(diagnostic.rendered.hasPrefix("fuzz.pipeline:\(diagnostic.location.line):\(diagnostic.location.column): error: "))
            }
            return false
        }
        let written = document.pipelineText
        do {
            let reread = try PipelineDocument.parse(written, file: "written.pipeline", options: options)
            #expect(reread == document, "iteration \(iteration): the written text reads back differently:\n\(written)")
            #expect(reread.pipelineText == written)
        } catch {
            Issue.record("iteration \(iteration): the written text does not parse:\n\(written)\n\(error.rendered)")
        }
        return true
    }

    @Test func mutatedBytesThroughLoad() throws {
        var random = SplitMix64(seed: 42)
        let directory = try TemporaryDirectory()
        for iteration in 0..<150 {
            let bytes = Self.mutate(Self.seed(iteration), &random)
            let file = directory.path("\(iteration).pipeline")
            #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
            do {
                _ = try PipelineDocument.load(path: file, options: ParseOptions(checksFileDevices: false))
            } catch {
                #expect(!error.diagnostics.isEmpty)
                #expect(error.diagnostics.allSatisfy { $0.location.file == file && $0.location.line >= 1 })
            }
        }
    }

    @Test func mutatedOverrides() {
        var random = SplitMix64(seed: 7)
        let names = ["camera.", "preview.", "session.", "ghost.", "", "photo."]
        let keys = ["device=", "pattern=", "preset=", "size=", "sink=", "kind=", "name=", "x", "=", "fail-after="]
        for _ in 0..<300 {
            var overrides: [String] = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let value = String(decoding: TextMutator.interesting.randomElement(using: &random)!, as: UTF8.self)
                overrides.append(names.randomElement(using: &random)! + keys.randomElement(using: &random)! + value)
            }
            do {
                _ = try PipelineDocument.parse(RunnerTests.camera, file: "o.pipeline", options: ParseOptions(overrides: overrides))
            } catch {
                #expect(error.diagnostics.allSatisfy { $0.location.line >= 1 && $0.location.column >= 1 })
            }
        }
    }
}
