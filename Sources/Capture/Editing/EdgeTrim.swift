import Foundation
import GStreamer

/// A frame of a file's video as its demuxer gives it (read by `EdgeTrim.frames(of:timeout:)`).
struct SourceFrame: Sendable, Equatable {
    /// Its position in the media (stream time, nanoseconds): the time a player shows it at.
    var time: UInt64
    /// True when it can be decoded on its own.
    var isKeyframe: Bool
    /// How long before it is shown it is decoded (PTS - DTS, nanoseconds; 0 when frames are not reordered).
    var decodeDelay: UInt64 = 0
    /// Its place in the order the demuxer gives the frames (the decoding order).
    var decodeOrder: Int = 0
}

/// What one video part of an exact trim reads and keeps (stream times of the source, nanoseconds).
struct FrameSelection: Sendable, Equatable {
    /// Where the part's seek starts: its first frame (a copy, at a keyframe), or halfway between the
    /// frame before and its first frame (an encoded part): a decoder shortens a frame that overlaps the
    /// start of its segment and stamps it with that start, so such a frame is told apart by its time.
    var seekStart: UInt64
    /// Where the seek stops (nil: the end of the file); past the part's end, so that every frame shown
    /// before it is read even when it is stored after one shown later.
    var seekStop: UInt64?
    /// The frames whose time lies here are kept, the others dropped: the part's frames, each with up
    /// to half the distance to its neighbours.
    var window: Range<UInt64>
    /// Taken off the kept frames' timestamps (decoded frames only): the first one then sits at the start
    /// of the segment, so the part's file starts with it, whatever the container.
    var shift: UInt64
    /// No kept frame lasts past this time: a longer one is shortened.
    var end: UInt64
    /// For an encoded part next to copied frames that are decoded ahead of their time (B-frames): when
    /// the parts are joined, its frames are decoded this much ahead of their time too (the copied
    /// keyframe's delay), so that the decoding times keep rising where the parts meet (the MP4 muxer
    /// would otherwise clamp them, and its edit list would then end early). 0: unchanged.
    var decodeDelay: UInt64
    /// For copied frames decoded ahead of their time: the one decoded last (its time) and the duration
    /// it is given, which reaches from its decoding time to the part's end. The MP4 muxer makes a
    /// track as long as its decoding times (the last one plus its duration) and ends its edit list
    /// there; with a variable frame rate and B-frames they end before the frames shown last.
    var lastDecoded: (time: UInt64, duration: UInt64)?

    static func == (a: FrameSelection, b: FrameSelection) -> Bool {
        (a.seekStart, a.seekStop, a.window, a.shift, a.end, a.decodeDelay) == (b.seekStart, b.seekStop, b.window, b.shift, b.end, b.decodeDelay)
            && a.lastDecoded?.time == b.lastDecoded?.time && a.lastDecoded?.duration == b.lastDecoded?.duration
    }
}

/// An exact trim, planned from the times of the source's frames: the output holds exactly the frames
/// shown in `start ..< end` (a frame within a millisecond of a bound counts as at it), in order, each
/// once, at their time minus `start`, with the sound of the same span.
///
/// For H.264 video going into an MP4, MOV or Matroska file, only the edges are re-encoded: the frames
/// before the first keyframe in the range (`head`) and those from the last point where the copy can
/// stop — a keyframe, or the end of the file — (`tail`); the frames between are copied unchanged
/// (`middle`). Otherwise the video of the range is re-encoded as one part. The sound of the range is
/// re-encoded on its own. Each part is written by a `Trimmer` to a temporary file next to the
/// destination, then one pipeline joins them: the video parts through `concat`, each placed at its
/// first frame's time (the H.264 through an `h264parse` that puts the parameter sets in the stream,
/// `avc3`: the re-encoded parts' differ from the source's), the sound beside them.
struct EdgeTrim {
    /// One part of the video: encoded or copied, which frames (indices into `frames`), what it keeps.
    struct Part: Equatable {
        var copy: Bool
        var frames: Range<Int>
        var selection: FrameSelection
        /// Where its first frame goes in the output (nanoseconds from the start of the trim).
        var offset: UInt64
        /// The time of its frame decoded last.
        var lastDecoded: UInt64
    }

    let source: String
    let media: MediaInfo
    let container: MovieContainer
    let start: Double
    let end: Double
    /// Every frame of the source's video, by time.
    let frames: [SourceFrame]
    /// The video parts, in order.
    let parts: [Part]
    /// The source's video (seconds, from keyframe to keyframe or the end) that is copied; nil when the
    /// video is re-encoded whole.
    let copied: Range<Double>?

    /// Times closer than this (nanoseconds) to a bound of the range count as at it: containers round
    /// timestamps (Matroska to the millisecond).
    static let tolerance: UInt64 = 1_000_000
    /// The time scale of the video tracks the MP4 and MOV muxers write (units per second): left to
    /// them, it follows the frame rate in the caps, which for a variable frame rate can be as coarse
    /// as 333 and moves frames by milliseconds.
    static let videoTimescale = 90_000
    /// How far past a part's end its seek stops (nanoseconds).
    static let readAhead: UInt64 = 500_000_000

    static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64((max(0, seconds) * 1e9).rounded()) }

    /// The indices of the frames shown in `start ..< end` (seconds): from the first frame at or after
    /// `start` to before `end`, both a millisecond early.
    static func shown(in frames: [SourceFrame], from start: Double, to end: Double) -> Range<Int> {
        let low = nanoseconds(start) > tolerance ? nanoseconds(start) - tolerance : 0
        let high = nanoseconds(end) > tolerance ? nanoseconds(end) - tolerance : 0
        let first = frames.firstIndex { $0.time >= low } ?? frames.count
        let last = frames.firstIndex { $0.time >= high } ?? frames.count
        return first..<max(first, last)
    }

    /// Plans the trim of `frames` (the source's, by time). Throws `noFrameInRange` when no frame is
    /// shown in the range. The middle is copied when the video is H.264, the container can hold it,
    /// the source is MP4/MOV (or Matroska into Matroska: the copied frames can come out of the Matroska
    /// demuxer without the timestamps the MP4 muxer needs) and the range holds a keyframe followed by a
    /// point where the copy can stop.
    init(source: String, media: MediaInfo, container: MovieContainer, start: Double, end: Double, frames: [SourceFrame]) throws(CaptureError) {
        let shown = EdgeTrim.shown(in: frames, from: start, to: end)
        guard !shown.isEmpty else { throw .noFrameInRange(path: source, from: start, to: end) }
        (self.source, self.media, self.container, self.start, self.end, self.frames) = (source, media, container, start, end, frames)
        let sourceContainer = media.container ?? ""
        let canCopy =
            media.video?.codec == "video/x-h264" && container.videoCodecs.contains(.h264)
            && (sourceContainer == "video/quicktime" || (sourceContainer == "video/x-matroska" && container == .mkv))
        let (startTime, endTime) = (EdgeTrim.nanoseconds(start), EdgeTrim.nanoseconds(end))
        func time(_ index: Int) -> UInt64? { frames.indices.contains(index) ? frames[index].time : nil }
        func offset(_ index: Int) -> UInt64 { frames[index].time > startTime ? frames[index].time - startTime : 0 }
        func encoded(_ range: Range<Int>, decodeDelay: UInt64) -> Part {
            let first = frames[range.lowerBound].time, last = frames[range.upperBound - 1].time
            let previous = time(range.lowerBound - 1), next = time(range.upperBound)
            let seekStart = previous.map { first - (first - $0) / 2 } ?? first
            let partEnd = min(endTime, next ?? UInt64.max)
            let selection = FrameSelection(
                seekStart: seekStart, seekStop: partEnd + EdgeTrim.readAhead,
                window: (previous.map { first - (first - $0) / 4 } ?? 0)..<(next.map { last + ($0 - last) / 2 } ?? UInt64.max),
                shift: first - seekStart, end: partEnd, decodeDelay: decodeDelay)
            return Part(copy: false, frames: range, selection: selection, offset: offset(range.lowerBound), lastDecoded: last)
        }
        var parts: [Part] = []
        if canCopy, let keyframe = shown.first(where: { frames[$0].isKeyframe }),
            let stop = (keyframe + 1...shown.upperBound).last(where: { $0 == frames.count || frames[$0].isKeyframe })
        {
            if keyframe > shown.lowerBound { parts.append(encoded(shown.lowerBound..<keyframe, decodeDelay: frames[keyframe].decodeDelay)) }
            let first = frames[keyframe].time, last = frames[stop - 1].time
            let previous = time(keyframe - 1), next = time(stop)
            let partEnd = next ?? max(EdgeTrim.nanoseconds(media.durationSeconds), last)
            let decodedLast = frames[keyframe..<stop].max { $0.decodeOrder < $1.decodeOrder }
            let selection = FrameSelection(
                seekStart: first, seekStop: next.map { $0 + EdgeTrim.readAhead },
                window: (previous.map { first - (first - $0) / 2 } ?? 0)..<(next.map { last + ($0 - last) / 2 } ?? UInt64.max),
                shift: 0, end: partEnd, decodeDelay: 0,
                lastDecoded: decodedLast.flatMap { frame in
                    // The track then runs from the keyframe's decoding time to the part's end plus the
                    // keyframe's delay: its edit list, which starts that delay in, shows every frame.
                    let decoded = frame.time - min(frame.time, frame.decodeDelay) + frames[keyframe].decodeDelay
                    return frame.decodeDelay > 0 && partEnd > decoded ? (frame.time, partEnd - decoded) : nil
                })
            parts.append(Part(copy: true, frames: keyframe..<stop, selection: selection, offset: offset(keyframe), lastDecoded: decodedLast?.time ?? last))
            if stop < shown.upperBound { parts.append(encoded(stop..<shown.upperBound, decodeDelay: frames[stop].decodeDelay)) }
            copied = Double(first) / 1e9..<(next.map { Double($0) / 1e9 } ?? max(media.durationSeconds, Double(last) / 1e9))
        } else {
            parts.append(encoded(shown, decodeDelay: 0))
            copied = nil
        }
        self.parts = parts
    }

    /// Every frame of the file's video (the first video stream), by time, read by demuxing and parsing
    /// it (nothing is decoded); nil when they cannot be read.
    static func frames(of source: String, timeout: Duration) -> [SourceFrame]? {
        let found = Locked<[SourceFrame]>([])
        guard let pipeline = try? Pipeline.make(name: "frames"),
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
        // The video goes to the fake sink through a probe that notes its frames; the rest is left unlinked.
        demux.onPadAdded { pad in
            let caps = pad.currentCaps?.structures.first?.name ?? pad.queryCaps()?.structures.first?.name ?? ""
            guard caps.hasPrefix("video/") || caps == "image/jpeg", (try? pad.link(to: sinkPad)) != nil else { return }
            pad.addProbe([.buffer]) { pad, info in
                // Frames before the segment (cut by an edit list) are never shown.
                if let buffer = info.buffer, let pts = buffer.pts, let time = pad.streamTime(of: pts) {
                    let delay = buffer.dts.map { pts > $0 ? pts - $0 : 0 } ?? 0
                    found.withLock { $0.append(SourceFrame(time: time, isKeyframe: !buffer.isDeltaUnit, decodeDelay: delay, decodeOrder: $0.count)) }
                }
                return .ok
            }
        }
        guard (try? pipeline.setState(.playing)) != nil else { return nil }
        let finish = ContinuousClock.now + timeout
        while ContinuousClock.now < finish {
            guard let message = pipeline.bus.pop(timeout: 200_000_000, kinds: [.eos, .error]) else { continue }
            guard message.kind == .eos else { return nil }
            let frames = found.value.sorted { $0.time < $1.time }
            return frames.isEmpty ? nil : frames
        }
        return nil
    }

    /// Writes the parts, then joins them into `temporary` (the container of the destination).
    func write(into temporary: String, target: String) throws(CaptureError) {
        var files: [String] = []
        defer { for file in files { unlink(file) } }
        func part(kind: String, mode: VideoEditor.TrimMode, selection: FrameSelection?, end: Double) throws(CaptureError) -> String {
            let path = try MediaFiles.temporary(for: target, extension: container.fileExtension)
            files.append(path)
            let trimmer = Trimmer(source: source, start: start, end: end, location: path, mode: mode, kinds: [kind], selection: selection)
            try withExtendedLifetime(trimmer) { () throws(CaptureError) in
                let codecs = try trimmer.plan(container: container, media: media)
                try trimmer.encode(
                    into: path, container: container, codecs: codecs, expectedStreams: 1,
                    timeout: .seconds(60) + .seconds((end - start) * 20))
            }
            return path
        }
        var video: [(path: String, offset: UInt64)] = []
        for videoPart in parts {
            video.append((try part(kind: "video", mode: videoPart.copy ? .keyframe : .exact, selection: videoPart.selection, end: end), videoPart.offset))
        }
        // The AAC encoder drops the samples that do not fill a last block of 1024: the sound is read one
        // block further, so that it covers the range (and a range shorter than a block has sound).
        var audio: String?
        if let sound = media.audio {
            let block = container.defaultAudioCodec == .aac && sound.sampleRate > 0 ? 1024 / Double(sound.sampleRate) : 0
            let path = try part(kind: "audio", mode: .exact, selection: nil, end: min(end + block, max(end, media.durationSeconds)))
            // Past the end of the file there may be less than a block: then the copy has no sound.
            audio = MediaInfo.discover(path)?.audio == nil ? nil : path
        }
        try join(video: video, audio: audio, into: temporary, target: target, timeout: .seconds(60) + .seconds((end - start) * 5))
    }

    /// Gives the frame of the last video part decoded last (on `pad`, the muxer's input) the duration
    /// that makes the output's track end where the trim's video does: the MP4 muxer makes a track as
    /// long as its decoding times (from the first to the last plus its duration) and shows it from the
    /// first frame's delay on, so the last frame's duration must make up for the delays of the first
    /// and the last (Matroska, which keeps no decoding times: to the end). The parsers before it give
    /// the frames durations of their own.
    private func endVideo(at pad: Pad) {
        guard let first = parts.first, let last = parts.last else { return }
        // Matroska keeps no decoding times: the last frame just lasts to the end.
        let decodingTimes = container != .mkv && container != .webm
        let firstDelay = !decodingTimes ? 0 : first.copy ? frames[first.frames.lowerBound].decodeDelay : first.selection.decodeDelay
        let startTime = EdgeTrim.nanoseconds(start)
        let videoEnd = Int64(last.selection.end == UInt64.max ? frames[last.frames.upperBound - 1].time : last.selection.end) - Int64(startTime)
        // Each part's file starts with its first frame, placed at its offset.
        let lastRunning = last.offset + (last.lastDecoded - frames[last.frames.lowerBound].time)
        pad.addProbe([.buffer]) { pad, info in
            guard let buffer = info.buffer, let pts = buffer.pts, let running = pad.currentSegment?.runningTime(of: pts),
                max(running, lastRunning) - min(running, lastRunning) < EdgeTrim.tolerance / 2
            else { return .ok }
            let delay = decodingTimes ? buffer.dts.map { pts > $0 ? Int64(pts - $0) : 0 } ?? 0 : 0
            let duration = videoEnd + delay - Int64(firstDelay) - Int64(running)
            if duration > 0 { info.setBufferDuration(UInt64(duration)) }
            return .ok
        }
    }

    /// One pipeline: each part `filesrc ! parsebin`; the video parts in order through `concat` into the
    /// muxer, each placed at its offset (a pad offset; `concat` keeps their times), the H.264 through
    /// `h264parse ! avc3` before and after `concat`; the sound through a queue.
    private func join(video: [(path: String, offset: UInt64)], audio: String?, into temporary: String, target: String, timeout: Duration) throws(CaptureError) {
        let avc3 = "video/x-h264,stream-format=avc3,alignment=au"
        let h264 = container.defaultVideoCodec == .h264
        let pipeline: Pipeline
        let bin: Bin
        var demuxers: [(demux: Element, input: Element?)] = []
        do {
            pipeline = try Pipeline.make(name: "trim-join")
            var chains: [Chain] = [
                Chain(input: nil, elements: [ElementSpec(container.muxerFactory, name: "join_mux"), ElementSpec("filesink", name: "join_sink")]),
                Chain(
                    input: nil,
                    elements: [ElementSpec("concat", name: "join_concat", [("adjust-base", "false")])]
                        + (h264
                            ? [
                                ElementSpec("h264parse", name: "join_parse", [("config-interval", "-1")]),
                                ElementSpec("capsfilter", name: "join_caps", [("caps", avc3)]),
                            ] : []) + [ElementSpec("queue", name: "join_video_queue")]),
                Chain(input: nil, elements: [ElementSpec("queue", name: "join_audio_queue")]),
            ]
            for index in video.indices {
                chains.append(
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "join_source_\(index)"), ElementSpec("parsebin", name: "join_demux_\(index)")]))
                chains.append(
                    Chain(
                        input: nil,
                        elements: h264
                            ? [
                                ElementSpec("h264parse", name: "join_parse_\(index)", [("config-interval", "-1")]),
                                ElementSpec("capsfilter", name: "join_part_\(index)", [("caps", avc3)]),
                            ] : [ElementSpec("queue", name: "join_part_\(index)")]))
            }
            if audio != nil {
                chains.append(
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "join_source_audio"), ElementSpec("parsebin", name: "join_demux_audio")]))
            }
            bin = try BinBuilder.bin(named: "join", chains: chains)
            try bin.child(named: "join_sink")?.set("location", temporary)
            for (index, part) in video.enumerated() { try bin.child(named: "join_source_\(index)")?.set("location", part.path) }
            if let audio { try bin.child(named: "join_source_audio")?.set("location", audio) }
            try pipeline.add(bin)
            guard let muxer = bin.child(named: "join_mux"), let concat = bin.child(named: "join_concat") else {
                throw GStreamerError.noSuchPad(element: "join", pad: "mux/concat")
            }
            // concat plays its pads in the order they were asked for.
            for (index, part) in video.enumerated() {
                guard let demux = bin.child(named: "join_demux_\(index)"), let last = bin.child(named: "join_part_\(index)") else {
                    throw GStreamerError.noSuchPad(element: "join", pad: "part \(index)")
                }
                let first = bin.child(named: "join_parse_\(index)") ?? last
                guard let output = last.staticPad("src") else { throw GStreamerError.noSuchPad(element: last.name, pad: "src") }
                // Each part's file starts with its first frame: it is placed at that frame's time.
                output.setOffset(Int64(part.offset))
                let delay = parts[index].selection.decodeDelay
                if delay > 0 {
                    // Decoded `delay` ahead of its time: the timestamps move later by as much as the
                    // segment, so the frames keep their time and the decoding times are the earlier ones.
                    output.addProbe([.buffer, .eventDownstream]) { _, info in
                        if let segment = info.segment {
                            info.replaceSegment(with: segment.delayed(by: delay))
                        } else if let pts = info.buffer?.pts {
                            info.setBufferTimestamps(pts: pts + delay, dts: pts)
                        }
                        return .ok
                    }
                }
                try output.link(to: try concat.requestPad("sink_%u"))
                demuxers.append((demux, first))
            }
            if audio != nil, let demux = bin.child(named: "join_demux_audio") { demuxers.append((demux, nil)) }
            for (kind, queueName) in [("video", "join_video_queue"), ("audio", "join_audio_queue")] where kind == "video" || audio != nil {
                guard let output = bin.child(named: queueName)?.staticPad("src") else { throw GStreamerError.noSuchPad(element: queueName, pad: "src") }
                if kind == "video" { endVideo(at: output) }
                let input = try muxer.requestPad("\(kind)_%u")
                if kind == "video", input.hasProperty("trak-timescale") { try input.set("trak-timescale", EdgeTrim.videoTimescale) }
                try output.link(to: input)
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
        for (demux, input) in demuxers {
            let target = input?.staticPad("sink") ?? bin.child(named: "join_audio_queue")?.staticPad("sink")
            let wanted = input == nil ? ["audio/"] : ["video/", "image/"]
            demux.onPadAdded { pad in
                let caps = pad.currentCaps?.structures.first?.name ?? pad.queryCaps()?.structures.first?.name ?? ""
                guard wanted.contains(where: { caps.hasPrefix($0) }), let target else { return }
                do { try pad.link(to: target) } catch { failure.withLock { $0 = "a part could not be joined: \(error)" } }
            }
        }
        try Trimmer.play(pipeline, source: source, location: target, timeout: timeout, job: "the joining of the trimmed parts") { failure.value }
    }
}
