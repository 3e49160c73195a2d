import CaptureBenchmarks
import Foundation

/// `capture soak`: the long run of still -> video -> still cycles (`make soak`).
enum SoakCommand {
    static let help = """
    usage: capture soak [--cycles N] [--output-dir DIR] [--json FILE]

    On one running session, N times (default 1000): a photo; the microphone and a movie output join in
    one configuration block; 1 s recorded; back in one block; a photo; an output added and removed.
    Every step has a deadline. Resident memory, descriptors and threads are sampled after each cycle;
    every movie is decoded with ffmpeg at the end. Files go to DIR (default ./soak, made if missing).
    --json FILE writes the report (the samples for scripts/plot-soak.py).
    Exit 0 when no step failed, every movie decodes, memory grew less than 5 MB from cycle 100 on and
    descriptors and threads stayed flat; 1 otherwise.
    """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["cycles", "output-dir", "json"], flags: [])
        let cycles = try parsed.int("cycles", range: 1...100_000) ?? 1000
        let directory = URL(fileURLWithPath: parsed.value("output-dir") ?? "soak").standardizedFileURL.path
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            printError("cannot make \(directory): \(error.localizedDescription)")
            return ExitCode.failure
        }
        let report = try await Soak.run(cycles: cycles, directory: directory) { message in printError("soak: \(message)") }
        if let path = parsed.value("json") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: path))
        }
        print("cycles: \(report.samples.count) of \(report.cycles); photos \(report.photos), movies \(report.movies) (\(report.brokenMovies.count) do not decode)")
        print("resident memory growth from cycle \(report.baseline?.cycle ?? 0): \(report.residentGrowthKiB) KiB; descriptors \(report.descriptorGrowth >= 0 ? "+" : "")\(report.descriptorGrowth); threads \(report.threadGrowth >= 0 ? "+" : "")\(report.threadGrowth)")
        for failure in report.failures { printError("soak: \(failure)") }
        for movie in report.brokenMovies { printError("soak: \(movie) does not decode") }
        print(report.passed ? "soak: passed" : "soak: FAILED")
        return report.passed ? ExitCode.success : ExitCode.failure
    }
}
