import Foundation
import GStreamer

/// An exact trim of H.264 video that re-encodes only the edges: the frames from the start to the
/// first keyframe in the range (`head`), the frames from the last keyframe in the range to the end
/// (`tail`); the frames between those keyframes are copied unchanged (`middle`). The sound of the
/// whole range is re-encoded on its own. Each part is written by a `Trimmer` to a temporary file
/// next to the destination, then one pipeline joins them: the video parts through `concat` and an
/// `h264parse` that puts the parameter sets in the stream (`avc3`: the re-encoded parts' differ from
/// the source's), the sound beside them.
struct EdgeTrim {
    let source: String
    let media: MediaInfo
    let container: MovieContainer
    let start: Double
    let end: Double
    /// The first keyframe at or after the start, the last at or before the end (seconds).
    let firstKeyframe: Double
    let lastKeyframe: Double
    /// Half a frame: times closer than this are the same frame.
    let halfFrame: Double

    /// The source's video between the two keyframes, copied.
    var copied: Range<Double> { firstKeyframe..<lastKeyframe }

    /// Nil when the edges cannot be cut apart: the video is not H.264, the container is WebM, the
    /// source is Matroska and the copy MP4 or MOV (the copied frames can come out of the Matroska
    /// demuxer without the timestamps the MP4 muxer needs), the frame rate or the keyframes cannot be
    /// read, or no two keyframes lie in the range (then the whole range is re-encoded).
    init?(source: String, media: MediaInfo, container: MovieContainer, start: Double, end: Double) {
        let sourceContainer = media.container ?? ""
        guard media.video?.codec == "video/x-h264", container.videoCodecs.contains(.h264),
            sourceContainer == "video/quicktime" || (sourceContainer == "video/x-matroska" && container == .mkv),
            let video = media.video, video.frameRateNumerator > 0, video.frameRateDenominator > 0,
            let keyframes = EdgeTrim.keyframes(of: source, timeout: .seconds(30) + .seconds(media.durationSeconds))
        else { return nil }
        let halfFrame = Double(video.frameRateDenominator) / Double(video.frameRateNumerator) / 2
        let times = keyframes.map { Double($0) / 1e9 }
        guard let first = times.first(where: { $0 >= start - halfFrame }), let last = times.last(where: { $0 <= end + halfFrame }),
            last - first > halfFrame
        else { return nil }
        (self.source, self.media, self.container, self.start, self.end) = (source, media, container, start, end)
        (self.firstKeyframe, self.lastKeyframe, self.halfFrame) = (first, last, halfFrame)
    }

    /// The times (positions in the media, nanoseconds, ascending) of the keyframes of the file's H.264 video, read
    /// by demuxing and parsing it (nothing is decoded); nil when they cannot be read.
    static func keyframes(of source: String, timeout: Duration) -> [UInt64]? {
        let times = Locked<[UInt64]>([])
        guard let pipeline = try? Pipeline.make(name: "keyframes"),
            let bin = try? BinBuilder.bin(
                named: "index",
                chains: [
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "index_source"), ElementSpec("parsebin", name: "index_demux")]),
                    Chain(input: nil, elements: [ElementSpec("fakesink", name: "index_sink", [("sync", "false"), ("async", "false")])]),
                ]),
            (try? bin.child(named: "index_source")?.set("location", source)) != nil,
            (try? pipeline.add(bin)) != nil,
            let demux = bin.child(named: "index_demux"), let sinkPad = bin.child(named: "index_sink")?.staticPad("sink")
        else { return nil }
        defer { Trimmer.stop(pipeline) }
        // The video goes to the fake sink through a probe that notes its keyframes; the rest is left unlinked.
        demux.onPadAdded { pad in
            guard (pad.currentCaps?.structures.first?.name ?? pad.queryCaps()?.structures.first?.name) == "video/x-h264",
                (try? pad.link(to: sinkPad)) != nil
            else { return }
            pad.addProbe([.buffer]) { pad, info in
                if let buffer = info.buffer, !buffer.isDeltaUnit, let pts = buffer.pts, let time = pad.streamTime(of: pts) {
                    times.withLock { $0.append(time) }
                }
                return .ok
            }
        }
        guard (try? pipeline.setState(.playing)) != nil else { return nil }
        let finish = ContinuousClock.now + timeout
        while ContinuousClock.now < finish {
            guard let message = pipeline.bus.pop(timeout: 200_000_000, kinds: [.eos, .error]) else { continue }
            guard message.kind == .eos else { return nil }
            let found = times.value.sorted()
            return found.isEmpty ? nil : found
        }
        return nil
    }

    /// Writes the parts, then joins them into `temporary` (the container of the destination).
    func write(into temporary: String, target: String) throws(CaptureError) {
        var parts: [String] = []
        defer { for part in parts { unlink(part) } }
        func part(from: Double, to: Double, mode: VideoEditor.TrimMode, kind: String) throws(CaptureError) -> String {
            let path = try MediaFiles.temporary(for: target, extension: container.fileExtension)
            parts.append(path)
            let trimmer = Trimmer(
                source: source, start: from, end: to, location: path, mode: mode, kinds: [kind],
                edgeTolerance: kind == "video" ? halfFrame : nil)
            try withExtendedLifetime(trimmer) { () throws(CaptureError) in
                let codecs = try trimmer.plan(container: container, media: media)
                try trimmer.encode(
                    into: path, container: container, codecs: codecs, expectedStreams: 1,
                    timeout: .seconds(60) + .seconds((to - from) * 20))
            }
            return path
        }
        var video: [String] = []
        // Each part stops half a frame before the next one's first frame: that frame is the next part's.
        if firstKeyframe - start > halfFrame {
            video.append(try part(from: start, to: firstKeyframe - halfFrame, mode: .exact, kind: "video"))
        }
        video.append(try part(from: firstKeyframe, to: lastKeyframe - halfFrame, mode: .keyframe, kind: "video"))
        if end - lastKeyframe > halfFrame {
            video.append(try part(from: lastKeyframe, to: end, mode: .exact, kind: "video"))
        }
        let audio = media.audio == nil ? nil : try part(from: start, to: end, mode: .exact, kind: "audio")
        try join(video: video, audio: audio, into: temporary, target: target, timeout: .seconds(60) + .seconds((end - start) * 5))
    }

    /// One pipeline: each part `filesrc ! parsebin`; the video parts in order through
    /// `h264parse ! avc3 ! concat ! h264parse ! avc3 ! queue` into the muxer, the sound through a queue.
    private func join(video: [String], audio: String?, into temporary: String, target: String, timeout: Duration) throws(CaptureError) {
        let avc3 = "video/x-h264,stream-format=avc3,alignment=au"
        let pipeline: Pipeline
        let bin: Bin
        var demuxers: [(demux: Element, video: Element?)] = []
        do {
            pipeline = try Pipeline.make(name: "trim-join")
            var chains: [Chain] = [
                Chain(input: nil, elements: [ElementSpec(container.muxerFactory, name: "join_mux"), ElementSpec("filesink", name: "join_sink")]),
                Chain(
                    input: nil,
                    elements: [
                        ElementSpec("concat", name: "join_concat"), ElementSpec("h264parse", name: "join_parse", [("config-interval", "-1")]),
                        ElementSpec("capsfilter", name: "join_caps", [("caps", avc3)]), ElementSpec("queue", name: "join_video_queue"),
                    ]),
                Chain(input: nil, elements: [ElementSpec("queue", name: "join_audio_queue")]),
            ]
            for index in video.indices {
                chains.append(
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "join_source_\(index)"), ElementSpec("parsebin", name: "join_demux_\(index)")]))
                chains.append(
                    Chain(
                        input: nil,
                        elements: [
                            ElementSpec("h264parse", name: "join_parse_\(index)", [("config-interval", "-1")]),
                            ElementSpec("capsfilter", name: "join_caps_\(index)", [("caps", avc3)]),
                        ]))
            }
            if audio != nil {
                chains.append(
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "join_source_audio"), ElementSpec("parsebin", name: "join_demux_audio")]))
            }
            bin = try BinBuilder.bin(named: "join", chains: chains)
            try bin.child(named: "join_sink")?.set("location", temporary)
            for (index, path) in video.enumerated() { try bin.child(named: "join_source_\(index)")?.set("location", path) }
            if let audio { try bin.child(named: "join_source_audio")?.set("location", audio) }
            try pipeline.add(bin)
            guard let muxer = bin.child(named: "join_mux"), let concat = bin.child(named: "join_concat") else {
                throw GStreamerError.noSuchPad(element: "join", pad: "mux/concat")
            }
            // concat plays its pads in the order they were asked for.
            for index in video.indices {
                guard let demux = bin.child(named: "join_demux_\(index)"), let caps = bin.child(named: "join_caps_\(index)"),
                    let parse = bin.child(named: "join_parse_\(index)")
                else { throw GStreamerError.noSuchPad(element: "join", pad: "part \(index)") }
                guard let output = caps.staticPad("src") else { throw GStreamerError.noSuchPad(element: caps.name, pad: "src") }
                try output.link(to: try concat.requestPad("sink_%u"))
                demuxers.append((demux, parse))
            }
            if audio != nil, let demux = bin.child(named: "join_demux_audio") { demuxers.append((demux, nil)) }
            for (kind, queueName) in [("video", "join_video_queue"), ("audio", "join_audio_queue")] where kind == "video" || audio != nil {
                guard let output = bin.child(named: queueName)?.staticPad("src") else { throw GStreamerError.noSuchPad(element: queueName, pad: "src") }
                try output.link(to: try muxer.requestPad("\(kind)_%u"))
            }
        } catch {
            throw Trimmer.buildFailure(error, source: source)
        }
        defer { Trimmer.stop(pipeline) }
        // Matroska refuses any change of caps, even of fields that do not matter (the parts' parsers
        // describe the same 640x360 H.264 with different fields): the first caps stay, the parameter
        // sets that follow are in the stream.
        if container.muxerFactory == "matroskamux", let output = bin.child(named: "join_video_queue")?.staticPad("src") {
            let seen = Locked(false)
            output.addProbe([.eventDownstream]) { _, info in
                guard info.eventCaps != nil else { return .ok }
                return seen.withLock { seen in
                    defer { seen = true }
                    return seen ? .drop : .ok
                }
            }
        }
        let failure = Locked<String?>(nil)
        for (demux, parse) in demuxers {
            let target = parse?.staticPad("sink") ?? bin.child(named: "join_audio_queue")?.staticPad("sink")
            let wanted = parse == nil ? "audio/" : "video/"
            demux.onPadAdded { pad in
                let caps = pad.currentCaps?.structures.first?.name ?? pad.queryCaps()?.structures.first?.name ?? ""
                guard caps.hasPrefix(wanted), let target else { return }
                do { try pad.link(to: target) } catch { failure.withLock { $0 = "a part could not be joined: \(error)" } }
            }
        }
        try Trimmer.play(pipeline, source: source, location: target, timeout: timeout, job: "the joining of the trimmed parts") { failure.value }
    }
}
