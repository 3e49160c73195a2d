import Capture
import CaptureBenchmarks
import CaptureCLI
import CaptureTestSupport
import Foundation
import PipelineFile

/// `capture soak --fuzz N`: N generated and mutated inputs, half of them `.pipeline` bytes for the reader
/// (some with `--set` overrides), half argument vectors for every command's parser (some of them
/// hostile locations for the file-naming check). Each answer is checked: a document that writes back
/// to itself, or located, printable diagnostics; options, or a printable usage error; a location
/// accepted only when it is a file name with at most one number directive. Time per input and
/// resident memory are watched.
enum Fuzz {
    struct Report {
        var inputs = 0
        var pipelinesAccepted = 0, pipelinesRejected = 0
        var argumentsAccepted = 0, argumentsRejected = 0
        var locationsAccepted = 0, locationsRejected = 0
        var slowest: (seconds: Double, what: String) = (0, "")
        var residentKiB: (start: Int, end: Int, peak: Int) = (0, 0, 0)
        /// What broke an invariant, with the input that did (escaped); saved inputs are in the folder.
        var findings: [String] = []
        var seconds = 0.0

        /// Growth from a tenth of the run to its end: the parser keeps nothing between inputs.
        var passed: Bool { findings.isEmpty && residentKiB.end - residentKiB.start < 32 * 1024 && slowest.seconds < 2 }
    }

    /// The commands whose options are fuzzed: the CLI's own command table (the specs its parsers read),
    /// with the parsers of the commands that run here, bench and soak, filled in.
    static let commands: [(name: String, spec: Arguments.Spec, parse: Command.Parser)] = CommandLineTool.commands.compactMap { command in
        guard let parse = command.parse ?? developerParsers[command.name] else { return nil }
        return (command.name, command.spec, parse)
    }

    static let developerParsers: [String: Command.Parser] = [
        "bench": { arguments throws(Arguments.UsageError) in _ = try BenchCommand.parse(arguments) },
        "soak": { arguments throws(Arguments.UsageError) in _ = try SoakCommand.parse(arguments) },
    ]

    /// Valid files to start from when no `Pipelines/` folder is at hand.
    static let builtInSeeds = [
        "input, name=camera, device=test-pattern\noutput, name=preview, kind=preview, sink=none\nstart\nwait, duration=1\nstop\n",
        "session, preset=cif352x288\ninput, name=camera, device=test-pattern, pattern=ball\ninput, name=mic, device=test-tone\n"
            + "output, name=movie, kind=movie, location=\"m_%d.mp4\"\noutput, name=photo, kind=photo, location=\"p/%04d.jpg\"\n"
            + "start\ncapture-photo, output=photo\nstart-recording, output=movie\nwait, duration=1\nstop-recording, output=movie\n"
            + "begin-configuration\nadd-output, name=f, kind=frames, location=\"f/img_%03d.png\", max-rate=5\ncommit-configuration\n"
            + "expect, event=photo-saved, count=1\nstop\n",
    ]

    static func run(count: Int, seed: UInt64, seedFolder: String?, failures folder: String, progress: (String) -> Void) -> Report {
        var random = SplitMix64(seed: seed)
        let seeds = builtInSeeds + pipelineFiles(under: seedFolder)
        let mutator = TextMutator(seeds: seeds)
        let generators = commands.map { ArgumentGenerator(options: $0.spec.options, flags: $0.spec.flags, aliases: $0.spec.aliases.keys) }
        let options = ParseOptions(baseDirectory: "/fuzz", checksFileDevices: false)
        var report = Report()
        let started = ContinuousClock.now
        report.residentKiB = (residentKiB(), 0, 0)
        var saved = 0
        func finding(_ what: String, input: [UInt8], ext: String) {
            report.findings.append(what)
            guard saved < 100 else { return }
            saved += 1
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: "\(folder)/finding-\(saved).\(ext)", contents: Data(input))
        }
        for iteration in 0..<count {
            let before = ContinuousClock.now
            var what = ""
            switch iteration % 4 {
            case 0, 1:  // .pipeline bytes, a quarter of them with overrides
                let bytes = mutator.mutate(seeds[Int.random(in: 0..<seeds.count, using: &random)], &random)
                var parseOptions = options
                if iteration % 8 == 1 {
                    parseOptions.overrides = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        ["camera.", "preview.", "session.", "photo.", "ghost.", ""].randomElement(using: &random)!
                            + ["device=", "pattern=", "preset=", "size=", "location=", "kind=", "x", "="].randomElement(using: &random)!
                            + HostileText.path(&random)
                    }
                }
                what = "pipeline input \(iteration)"
                if let problem = checkPipeline(bytes, options: parseOptions, report: &report) {
                    finding("\(what): \(problem)", input: bytes + Array(parseOptions.overrides.map { "\n# --set \($0)" }.joined().utf8), ext: "pipeline")
                }
            case 2:  // an argument vector for one command
                let index = Int.random(in: 0..<commands.count, using: &random)
                let arguments = generators[index].next(&random)
                what = "capture \(commands[index].name) \(arguments)"
                do throws(Arguments.UsageError) {
                    try commands[index].parse(arguments)
                    report.argumentsAccepted += 1
                } catch {
                    report.argumentsRejected += 1
                    if error.description.isEmpty || error.description.unicodeScalars.contains(where: isControl) {
                        finding(
                            "\(FileNaming.printable(what)): the usage error is empty or holds a control character: \(FileNaming.printable(error.description))",
                            input: Array(arguments.joined(separator: "\n").utf8), ext: "args")
                    }
                }
            default:  // a location
                let location = HostileText.path(&random)
                what = "location \(FileNaming.printable(location))"
                if let problem = checkLocation(location, report: &report) {
                    finding("\(what): \(problem)", input: Array(location.utf8), ext: "location")
                }
            }
            let seconds = (ContinuousClock.now - before).seconds
            if seconds > report.slowest.seconds { report.slowest = (seconds, what) }
            report.inputs += 1
            if iteration == count / 10 { report.residentKiB.start = residentKiB() }
            if (iteration + 1) % 100_000 == 0 {
                report.residentKiB.peak = max(report.residentKiB.peak, residentKiB())
                progress("\(iteration + 1) inputs, \(report.findings.count) findings, \(residentKiB() / 1024) MiB resident")
            }
            if report.findings.count >= 1000 { break }
        }
        report.residentKiB.end = residentKiB()
        report.residentKiB.peak = max(report.residentKiB.peak, report.residentKiB.end)
        report.seconds = (ContinuousClock.now - started).seconds
        return report
    }

    /// A problem with the reader's answer, or nil when it is right.
    static func checkPipeline(_ bytes: [UInt8], options: ParseOptions, report: inout Report) -> String? {
        let document: PipelineDocument
        do {
            document = try PipelineDocument.parse(bytes: bytes, file: "fuzz.pipeline", options: options)
        } catch {
            report.pipelinesRejected += 1
            guard !error.diagnostics.isEmpty else { return "rejected without a diagnostic" }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
            for diagnostic in error.diagnostics {
                let location = diagnostic.location
                // Line 0 is the file as a whole (too big, not UTF-8 where no line can be named); an
                // override's diagnostic is located in the `--set` values, one line each.
                let inOverrides = location.file == "--set"
                guard location.file == "fuzz.pipeline" || (inOverrides && !options.overrides.isEmpty) else {
                    return "a diagnostic names another file: \(diagnostic.rendered)"
                }
                guard location.line == 0 || (1...(inOverrides ? options.overrides.count : lines)).contains(location.line),
                    location.line == 0 || location.column >= 1
                else {
                    return "a diagnostic is not located in the input: \(diagnostic.rendered)"
                }
                let rendered = diagnostic.rendered
                if rendered.unicodeScalars.contains(where: { $0 != "\n" && $0 != "\t" && isControl($0) }) || rendered.split(separator: "\n").count > 3 {
                    return "a diagnostic holds a control character or more than three lines: \(FileNaming.printable(rendered))"
                }
            }
            return nil
        }
        report.pipelinesAccepted += 1
        let written = document.pipelineText
        do {
            let reread = try PipelineDocument.parse(
                written, file: "written.pipeline", options: ParseOptions(baseDirectory: options.baseDirectory, checksFileDevices: false))
            if reread != document { return "the written text reads back differently:\n\(written)" }
            if reread.pipelineText != written { return "the written text does not write back to itself:\n\(written)" }
        } catch {
            return "the written text does not parse (\(error.rendered)):\n\(written)"
        }
        return nil
    }

    /// A location is accepted only when it is a file name with no control character and at most one
    /// `%d`/`%Nd`/`%0Nd` (N up to 9) and no other '%' byte; numbering it replaces just that directive.
    static func checkLocation(_ location: String, report: inout Report) -> String? {
        let safe = isSafeLocation(location)
        do throws(CaptureError) {
            try FileNaming.checkLocation(location)
        } catch {
            report.locationsRejected += 1
            guard case .invalidLocation = error else { return "refused with \(error.name), not invalid-location" }
            if error.description.unicodeScalars.contains(where: isControl) { return "the error holds a control character" }
            return nil
        }
        report.locationsAccepted += 1
        guard let expected = safe else { return "accepted, yet it is not a file name with at most one number directive" }
        let numbered = FileNaming.candidate(location, 0, start: 7)
        return numbered == expected ? nil : "numbered as \(FileNaming.printable(numbered)), not \(FileNaming.printable(expected))"
    }

    /// What the location is when numbered 7, or nil when it should be refused. Written apart from
    /// FileNaming, on bytes.
    static func isSafeLocation(_ location: String) -> String? {
        let bytes = Array(location.utf8)
        guard !bytes.isEmpty, bytes.last != UInt8(ascii: "/"), !location.unicodeScalars.contains(where: isControl) else { return nil }
        let lastComponent = location.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard lastComponent != ".", lastComponent != ".." else { return nil }
        let percents = bytes.indices.filter { bytes[$0] == UInt8(ascii: "%") }
        guard let percent = percents.first else { return location }
        guard percents.count == 1 else { return nil }
        var end = percent + 1
        while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "d") else { return nil }
        let digits = String(decoding: bytes[(percent + 1)..<end], as: UTF8.self)
        guard digits.count <= 2, (Int(digits) ?? 0) <= 9 else { return nil }
        let width = Int(digits) ?? 0
        let number = String(repeating: digits.hasPrefix("0") ? "0" : " ", count: max(0, width - 1)) + "7"
        return String(decoding: bytes[..<percent] + Array(number.utf8) + bytes[(end + 1)...], as: UTF8.self)
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7f }

    /// Every `.pipeline` file under a folder (the repository's Pipelines/ by default).
    static func pipelineFiles(under folder: String?) -> [String] {
        guard let folder, let walker = FileManager.default.enumerator(atPath: folder) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".pipeline") }.sorted()
            .compactMap { try? String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8) }
    }

    static func residentKiB() -> Int { ProcessUsage.now().residentKiB }
}
