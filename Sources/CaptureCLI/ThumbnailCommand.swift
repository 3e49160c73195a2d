import Capture
import Foundation

enum ThumbnailCommand {
    static let help = """
        usage: capture thumbnail VIDEO [--at TIME|PERCENT]... [-o IMAGE] [--size WxH] [--keyframe]
                                 [--codec jpeg|png] [--quality N] [--json]

        The image of a video at a time, like AVAssetImageGenerator (recipe 9-8).
          --at TIME|PERCENT   seconds (2.5, "500ms", "1.5m") or a share of the duration (50%); default the
                              middle. Repeat it for several images from one decoding pass.
          -o, --output IMAGE  where to save (default: VIDEO's name with -thumb.jpg); the extension chooses
                              JPEG or PNG; with several --at, a %d pattern numbers them (default NAME-thumb-%d);
                              an existing file is never replaced: the next free name is used
          --size WxH          the image fits inside WxH, keeping its aspect ratio (default: the video's size)
          --keyframe          the keyframe nearest the time (fast) instead of the exact frame
          --codec jpeg|png    default: from the extension, else jpeg
          --quality N         JPEG quality 1-100 (default 90)
          --json              one JSON object per image on stdout
        The track's rotation tag is applied. Exit 65 for a file that is not a video or a time outside it.
        """

    static let spec = Arguments.Spec(
        options: ["at", "output", "size", "codec", "quality"], flags: ["keyframe", "json"],
        aliases: ["o": "output"])

    struct Options {
        var video: String
        var times: [AssetImageGenerator.Time]
        var location: String?
        var size: Size?
        var keyframe = false
        var codec: PhotoCodec?
        var quality = 90
        var json = false
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        guard parsed.positionals.count == 1, let video = parsed.positionals.first else {
            throw Arguments.UsageError(
                description: parsed.positionals.isEmpty ? "give the VIDEO to take the image from" : "give one VIDEO, not \(parsed.positionals.count)")
        }
        var times: [AssetImageGenerator.Time] = []
        for text in parsed.all("at") {
            guard let time = AssetImageGenerator.Time(text) else {
                throw Arguments.UsageError(description: "--at takes seconds (2.5, \"500ms\", \"1.5m\") or a percentage (50%), not '\(text)'")
            }
            times.append(time)
        }
        guard times.count <= 1000 else { throw Arguments.UsageError(description: "--at is given \(times.count) times; at most 1000") }
        let codec = try parsed.value("codec").map { text throws(Arguments.UsageError) -> PhotoCodec in
            guard let codec = PhotoCodec(rawValue: text) else { throw Arguments.UsageError(description: "--codec must be jpeg or png, not '\(text)'") }
            return codec
        }
        return Options(
            video: video, times: times.isEmpty ? [.middle] : times, location: parsed.value("output"), size: try parsed.size("size"),
            keyframe: parsed.flag("keyframe"), codec: codec, quality: try parsed.int("quality", range: 1...100) ?? 90,
            json: parsed.flag("json"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let base = URL(fileURLWithPath: options.video).deletingPathExtension().lastPathComponent
        let implied: PhotoCodec? = options.location.flatMap { location in
            switch URL(fileURLWithPath: location).pathExtension.lowercased() {
            case "png": .png
            case "jpg", "jpeg": .jpeg
            default: nil
            }
        }
        let codec = options.codec ?? implied ?? .jpeg
        var location = options.location ?? (options.times.count > 1 ? "\(base)-thumb-%d" : "\(base)-thumb")
        if options.times.count > 1 && !FileNaming.isPattern(location) {
            let url = URL(fileURLWithPath: location)
            location = url.deletingPathExtension().path + "-%d" + (url.pathExtension.isEmpty ? "" : ".\(url.pathExtension)")
        }
        try FileNaming.checkLocation(location)
        try FileNaming.checkImageExtension(location, codec)
        var generator = AssetImageGenerator(videoAt: options.video)
        generator.tolerance = options.keyframe ? .keyframe : .exact
        generator.maximumSize = options.size
        generator.codec = codec
        generator.quality = options.quality
        let images = try await generator.images(at: options.times)
        for image in images {
            let path = try FileNaming.writeNew(image.data, to: FileNaming.withExtension(location, codec))
            if options.json {
                let fields: [(String, EventValue)] = [
                    ("location", .string(path)), ("width", .int(image.width)), ("height", .int(image.height)),
                    ("requested-time", .double(image.requestedTime)), ("actual-time", .double(image.actualTime)),
                ]
                print(jsonObject(fields))
            } else {
                print(
                    "\(path)  \(image.width)x\(image.height)  frame at \(String(format: "%.3f", image.actualTime)) s (asked \(String(format: "%.3f", image.requestedTime)) s)"
                )
            }
        }
        return ExitCode.success
    }
}

/// One JSON object on one line, its keys in the order given.
func jsonObject(_ fields: [(String, EventValue)]) -> String {
    "{" + fields.map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}"
}
