import Capture
import Foundation

enum TrimCommand {
    static let help = """
        usage: capture trim VIDEO --from T --to T -o OUT [--fast] [--json]

        A trimmed copy of a video, like UIVideoEditorController (recipe 9-3): frame-exact unless --fast.
        VIDEO is only read.
          --from T, --to T    the range, in seconds (2.5, "500ms", "1.5m"); --to may be the end of the video
          -o, --output OUT    the new file; its extension chooses the container (mp4, m4v, mov, mkv, webm); an
                              existing file is never replaced: the next free name (OUT-1.mp4) is used
                              By default the copy holds exactly the frames shown from --from to
                              before --to, at their times, with the sound of the range: H.264 into
                              mp4/m4v/mov/mkv re-encodes only the edges (before the first keyframe in
                              the range, from the last) and copies the video between, the sound
                              re-encoded (AAC); other videos, webm copies, a Matroska source into
                              mp4/mov, or ranges without a keyframe to copy from are re-encoded whole
                              (H.264 + AAC, or VP8 + Opus for webm)
          --fast              copy the streams instead, from the keyframe at or before --from (nothing
                              re-encoded; the copy may start earlier than --from)
          --exact             the default (frame-exact), accepted for scripts written when it was not
          --json              one JSON object on stdout ("strategy": copy, edges or whole, what was
                              re-encoded; "copied-from"/"copied-to": the source's video copied, for edges)
        Exit 64 for --fast with --exact. Exit 65 for a file that is not a video, a time outside it, --from
        not before --to, or (without --fast) a range that holds no frame; nothing is written then.
        """

    static let spec = Arguments.Spec(options: ["from", "to", "output"], flags: ["exact", "fast", "json"], aliases: ["o": "output"])

    struct Options {
        var video: String
        var from: Double
        var to: Double
        var location: String
        var fast = false
        var json = false
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        guard parsed.positionals.count == 1, let video = parsed.positionals.first else {
            throw Arguments.UsageError(description: parsed.positionals.isEmpty ? "give the VIDEO to trim" : "give one VIDEO, not \(parsed.positionals.count)")
        }
        guard let from = try parsed.duration("from", zero: true) else { throw Arguments.UsageError(description: "--from is required") }
        guard let to = try parsed.duration("to") else { throw Arguments.UsageError(description: "--to is required") }
        guard let location = parsed.value("output") else { throw Arguments.UsageError(description: "-o OUT is required") }
        if parsed.flag("fast") && parsed.flag("exact") {
            throw Arguments.UsageError(description: "--fast (cut at keyframes) and --exact (frame-exact, the default) contradict each other; give one")
        }
        return Options(video: video, from: from.seconds, to: to.seconds, location: location, fast: parsed.flag("fast"), json: parsed.flag("json"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let result = try await VideoEditor.trim(
            videoAt: options.video, from: options.from, to: options.to, saveTo: options.location,
            mode: options.fast ? .keyframe : .exact)
        if options.json {
            print(
                jsonObject(
                    [
                        ("location", .string(result.location)), ("mode", .string(result.mode.rawValue)), ("from", .double(result.requestedStart)),
                        ("to", .double(result.requestedEnd)), ("duration", .double(result.duration)), ("size", .int(Int(result.size))),
                        ("audio", .bool(result.hasAudio)), ("strategy", .string(result.strategy.rawValue)),
                    ]
                        + (result.copiedRange.map { [("copied-from", .double($0.lowerBound)), ("copied-to", .double($0.upperBound))] } ?? [])))
        } else {
            print(
                "\(FileNaming.printable(result.location))  \(String(format: "%.3f", result.duration)) s (asked \(String(format: "%.3f", result.requestedEnd - result.requestedStart)) s, \(result.mode.rawValue), \(result.strategy == .copy ? "copied" : result.strategy == .edges ? "edges re-encoded" : "re-encoded"))\(result.hasAudio ? ", with sound" : "")"
            )
        }
        return ExitCode.success
    }
}
