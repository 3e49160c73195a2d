import CaptureTestSupport
import Foundation
import Testing

/// `capture` ships without the benchmarks, the soak runs, the fuzzer and their fixtures: `bench` and
/// `soak` run in the developer executable, capture-dev, built next to it, which `capture` hands them to.
@Suite struct DeveloperExecutableTests {
    /// Names that stand, spelt out, in the symbols of the test and benchmark code: its modules (Swift's
    /// mangling may shorten "Capture" in them, not the rest), its types and capture-dev's own module.
    static let developerNames = [
        "TestSupport", "Benchmarks", "BarcodeCorpus", "Fuzz", "TextMutator", "ChildProcess", "HostileText", "ArgumentGenerator", "capture_dev",
    ]

    /// The symbol table of a binary, as the linker left it (`nm`).
    static func symbols(_ binary: String) throws -> String {
        let result = try ChildProcess(["nm", binary]).finish()
        #expect(result.status == 0, "nm \(binary): \(result.error)")
        return result.output
    }

    @Test func captureLinksNoTestOrBenchmarkCode() throws {
        let binary = URL(fileURLWithPath: captureBinary).resolvingSymlinksInPath()
        let shipped = try Self.symbols(binary.path)
        #expect(!shipped.isEmpty)
        let found = Self.developerNames.filter { shipped.contains($0) }
        #expect(found.isEmpty, "capture links symbols named \(found)")
        // The same check finds them in capture-dev: the symbols it reads would show them.
        let developer = try Self.symbols(binary.deletingLastPathComponent().appendingPathComponent("capture-dev").path)
        for name in ["TestSupport", "Benchmarks", "BarcodeCorpus", "Fuzz"] { #expect(developer.contains(name), "capture-dev has no \(name)") }
    }

    @Test func benchAndSoakRunInCaptureDevWithTheirExitStatus() throws {
        // A usage error of capture-dev's parser (the benchmark names are known there only), quoting the
        // argument as it was typed.
        let unknown = try capture(["bench", "--only", "a b%s"])
        #expect(unknown.status == 64 && unknown.error.contains("unknown benchmark 'a b%s'"), "\(unknown.error)")
        let scratch = try Scratch()
        let fuzz = try capture(["soak", "--fuzz", "200", "--seeds", packageRoot + "/Pipelines", "--output-dir", scratch.path])
        #expect(fuzz.status == 0 && fuzz.output.contains("fuzz: passed"), "\(fuzz.output)\(fuzz.error)")
    }

    @Test func withoutCaptureDevBenchSaysHowToBuildIt() throws {
        let scratch = try Scratch()
        let alone = scratch.file("capture")
        try FileManager.default.copyItem(atPath: captureBinary, toPath: alone)
        let bench = try ChildProcess([alone, "bench", "--only", "startup"]).finish()
        #expect(bench.status == 69 && bench.error.contains("--product capture-dev") && bench.output.isEmpty, "\(bench.error)")
        let soak = try ChildProcess([alone, "soak", "--fuzz", "10"]).finish()
        #expect(soak.status == 69 && soak.error.contains("capture-dev"), "\(soak.error)")
        // Their help and their options in the completions come from capture's own command table.
        let help = try ChildProcess([alone, "soak", "--help"]).finish()
        #expect(help.status == 0 && help.output.hasPrefix("usage: capture soak"))
        let bash = try ChildProcess([alone, "completions", "bash"]).finish()
        let benchLine = bash.output.split(separator: "\n").first { $0.contains("bench) options=") }
        #expect(benchLine?.contains("--only") == true && benchLine?.contains("--stream-pattern") == true, "\(benchLine ?? "no bench line")")
    }
}
