import Capture
import CaptureBenchmarks
import CaptureCLI
import Foundation

/// `capture bench`: the benchmarks, side by side with their peers. Its options and help are in
/// CaptureCLI, with the CLI's other commands.
extension BenchCommand {
    struct Options {
        var only: Set<String> = []
        var seconds = 5
        var movieSeconds = 60
        var input: String?
        var cycles = 3
        var plotData: String?
        var json = false
        var streams = 8
        var streamSeconds = 60
        var streamPattern = "smpte"
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        let only = Set((parsed.value("only") ?? "").split(separator: ",").map(String.init))
        for name in only where !Benchmarks.names.contains(name) {
            throw Arguments.UsageError(description: "unknown benchmark '\(name)' (known: \(Benchmarks.names.joined(separator: ", ")))")
        }
        let plotData = parsed.value("plot-data")
        if plotData != nil && !(only.isEmpty || only.contains("mode-switch")) {
            throw Arguments.UsageError(description: "--plot-data is written by the mode-switch benchmark; add it to --only")
        }
        return Options(
            only: only, seconds: try parsed.int("seconds", range: 1...600) ?? 5, movieSeconds: try parsed.int("movie-seconds", range: 1...3600) ?? 60,
            input: parsed.value("input"), cycles: try parsed.int("cycles", range: 1...10) ?? 3, plotData: plotData, json: parsed.flag("json"),
            streams: try parsed.int("streams", range: 1...64) ?? 8, streamSeconds: try parsed.int("stream-seconds", range: 5...3600) ?? 60,
            streamPattern: try streamPattern(parsed))
    }

    /// `--stream-pattern smpte|ball|snow`: the streaming benchmark's picture.
    static func streamPattern(_ parsed: Arguments) throws(Arguments.UsageError) -> String {
        let pattern = parsed.value("stream-pattern") ?? "smpte"
        guard ["smpte", "ball", "snow"].contains(pattern) else {
            throw Arguments.UsageError(description: "--stream-pattern must be smpte (still), ball (motion) or snow (noise), not '\(pattern)'")
        }
        return pattern
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (only, seconds, movieSeconds, cycles, plotData, json) = (
            options.only, options.seconds, options.movieSeconds, options.cycles, options.plotData, options.json
        )
        let input = try options.input.map { try CaptureDevice.resolve($0) } ?? .testPattern
        let results = try await Benchmarks.run(
            only: only, seconds: Double(seconds), movieSeconds: Double(movieSeconds), input: input,
            cycles: cycles, plotDataPath: plotData, streams: options.streams,
            streamSeconds: Double(options.streamSeconds), streamPattern: options.streamPattern
        ) { message in
            if !json { FileHandle.standardError.write(Data("bench: \(message)\n".utf8)) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        } else {
            for result in results {
                var line = "\(result.name): \(String(format: "%.1f", result.value)) \(result.unit)"
                if let peer = result.peer, let value = result.peerValue {
                    line += "  |  \(peer): \(String(format: "%.1f", value)) \(result.unit)"
                    if let ratio = result.ratio { line += "  |  ratio \(String(format: "%.2f", ratio))" }
                } else if let peer = result.peer {
                    line += "  |  \(peer)"
                }
                if let note = result.note { line += "  (\(note))" }
                print(line)
            }
        }
        return ExitCode.success
    }
}
