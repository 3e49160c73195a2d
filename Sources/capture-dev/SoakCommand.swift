import Capture
import CaptureBenchmarks
import CaptureCLI
import Foundation

/// `capture soak`: the long run of still -> video -> still cycles (`make soak`), one long recording, or
/// the fuzzer. Its options and help are in CaptureCLI, with the CLI's other commands.
extension SoakCommand {
    struct Options {
        var cycles = 1000
        var recording: Duration?
        var photoInterval = Duration.seconds(10)
        var directory = "soak"
        var json: String?
        var fuzz: Int?
        var seed: UInt64 = 0xF0_22ED
        var seeds: String?
        var measure: String?
        var frameRate = 30.0
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        let recording = try parsed.duration("recording")
        let modes = ["cycles", "recording", "fuzz", "measure"].filter { parsed.value($0) != nil }
        if modes.count > 1 { throw Arguments.UsageError(description: "--\(modes[0]) and --\(modes[1]) exclude each other") }
        let seed = try parsed.value("seed").map { text throws(Arguments.UsageError) -> UInt64 in
            guard let seed = UInt64(text) else {
                throw Arguments.UsageError(description: "--seed must be a whole number from 0 to \(UInt64.max), not '\(text)'")
            }
            return seed
        }
        return Options(
            cycles: try parsed.int("cycles", range: 1...100_000) ?? 1000, recording: recording,
            photoInterval: try parsed.duration("photo-interval") ?? .seconds(10), directory: parsed.value("output-dir") ?? "soak",
            json: parsed.value("json"), fuzz: try parsed.int("fuzz", range: 1...100_000_000), seed: seed ?? 0xF0_22ED,
            seeds: parsed.value("seeds"), measure: parsed.value("measure"), frameRate: Double(try parsed.int("framerate", range: 1...240) ?? 30))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        if let movie = options.measure {
            let report = Soak.measure(recording: movie, frameRate: options.frameRate)
            printMeasurement(report)
            let passed = report.videoFrames > 0 && report.missingFrames == 0 && report.drift < 1 / report.frameRate && report.decodes
            print(passed ? "measure: passed" : "measure: FAILED")
            return passed ? ExitCode.success : ExitCode.failure
        }
        let directory = URL(fileURLWithPath: options.directory).standardizedFileURL.path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            printError("cannot make \(directory): \(error.localizedDescription)")
            return ExitCode.failure
        }
        if let count = options.fuzz {
            let seeds = options.seeds ?? (FileManager.default.fileExists(atPath: "Pipelines") ? "Pipelines" : nil)
            return runFuzz(count: count, seed: options.seed, seeds: seeds, directory: directory)
        }
        if let recording = options.recording {
            return try await runRecording(seconds: recording.seconds, photoInterval: options.photoInterval.seconds, directory: directory, json: options.json)
        }
        let report = try await Soak.run(cycles: options.cycles, directory: directory) { message in printError("soak: \(message)") }
        try write(report, to: options.json)
        print(
            "cycles: \(report.samples.count) of \(report.cycles); photos \(report.photos), movies \(report.movies) (\(report.brokenMovies.count) do not decode), camera switches \(report.switches)"
        )
        print(
            "resident memory growth from cycle \(report.baseline?.cycle ?? 0): \(report.residentGrowthKiB) KiB (held, after malloc_trim: \(report.heldGrowthKiB.map { "\($0) KiB" } ?? "not measured")); descriptors \(report.descriptorGrowth >= 0 ? "+" : "")\(report.descriptorGrowth); threads \(report.threadGrowth >= 0 ? "+" : "")\(report.threadGrowth)"
        )
        for failure in report.failures { printError("soak: \(failure)") }
        for movie in report.brokenMovies { printError("soak: \(movie) does not decode") }
        print(report.passed ? "soak: passed" : "soak: FAILED")
        return report.passed ? ExitCode.success : ExitCode.failure
    }

    static func runRecording(seconds: Double, photoInterval: Double, directory: String, json: String?) async throws -> Int32 {
        let report = try await Soak.recording(seconds: seconds, photoInterval: photoInterval, directory: directory) { message in printError("soak: \(message)")
        }
        try write(report, to: json)
        print("recorded \(format(report.recordedSeconds)) s into \(report.location)")
        printMeasurement(report)
        print(
            "dropped by the framework: \(report.drops.isEmpty ? "none" : report.drops.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
        print(
            "photos: \(report.photos) (\(report.photoFailures.count) failed); barcode branch: \(report.metadataReceived) frames received, \(report.metadataDecoded) decoded"
        )
        print("resident memory growth from minute five: \(report.residentGrowthKiB) KiB")
        for failure in report.failures + report.photoFailures { printError("soak: \(failure)") }
        print(report.passed ? "soak: passed" : "soak: FAILED")
        return report.passed ? ExitCode.success : ExitCode.failure
    }

    static func runFuzz(count: Int, seed: UInt64, seeds: String?, directory: String) -> Int32 {
        let findings = directory + "/fuzz-findings"
        let report = Fuzz.run(count: count, seed: seed, seedFolder: seeds, failures: findings) { message in printError("soak: fuzz: \(message)") }
        print("fuzz: \(report.inputs) inputs in \(format(report.seconds)) s (seed \(seed), seeds from \(seeds ?? "the built-in files"))")
        print(".pipeline: \(report.pipelinesAccepted) accepted and written back, \(report.pipelinesRejected) rejected with located diagnostics")
        print(
            "arguments: \(report.argumentsAccepted) accepted, \(report.argumentsRejected) usage errors; locations: \(report.locationsAccepted) accepted, \(report.locationsRejected) refused"
        )
        print("slowest input: \(format(report.slowest.seconds * 1000)) ms (\(FileNaming.printable(report.slowest.what).prefix(200)))")
        print(
            "resident memory: \(report.residentKiB.start / 1024) MiB after a tenth, \(report.residentKiB.end / 1024) MiB at the end, peak \(report.residentKiB.peak / 1024) MiB"
        )
        for finding in report.findings.prefix(20) { printError("soak: fuzz: \(FileNaming.printable(finding).prefix(600))") }
        if !report.findings.isEmpty { printError("soak: fuzz: \(report.findings.count) findings; inputs saved in \(findings)") }
        print(report.passed ? "fuzz: passed" : "fuzz: FAILED")
        return report.passed ? ExitCode.success : ExitCode.failure
    }

    /// The file's lines of a recording measurement: size, decoding, frames, gaps, spans, drift.
    static func printMeasurement(_ report: RecordingSoakReport) {
        print("\(report.location): \(format(Double(report.fileBytes) / 1_048_576)) MiB; decodes: \(report.decodes ? "yes" : "NO")")
        print(
            "video: \(report.videoFrames) frames over \(format(report.videoSpan)) s (\(report.missingFrames) missing, longest gap \(format(report.longestVideoGap)) s); audio: \(format(report.audioSpan)) s; largest A/V drift \(format(report.drift * 1000)) ms (one frame: \(format(1000 / report.frameRate)) ms)"
        )
    }

    static func format(_ value: Double) -> String { String(format: "%.3f", value) }

    static func write(_ report: some Encodable, to path: String?) throws {
        guard let path else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
}
