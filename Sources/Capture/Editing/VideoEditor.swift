import Foundation
import GStreamer

/// Trimmed copies of a video, like `UIVideoEditorController` (recipe 9-3): the source is only read,
/// the copy appears under its name once it is complete, and a trimmed file can be trimmed again.
///
/// ```swift
/// let result = try await VideoEditor.trim(videoAt: "clip.mp4", from: 1, to: 3, saveTo: "clip-trimmed.mp4")
/// ```
///
/// Two ways to cut:
/// - `.exact` (the default, as `UIVideoEditorController` and `AVAssetExportSession` cut): the copy
///   holds exactly the frames shown from `from` to before `to` (a frame within a millisecond of a bound counts as at it), in order, each at its time minus `from`, with the sound
///   of the range. The cuts follow the times of the source's frames (read first), not its frame rate,
///   so variable frame rates and B-frames cut exactly too; a range that holds no frame (shorter than a
///   frame, or inside a gap) throws `CaptureError.noFrameInRange` before anything is written. For H.264
///   video going into an MP4, MOV or Matroska file, only the edges are re-encoded: the frames before the
///   first keyframe in the range, and those from the last keyframe in the range (none when the range
///   ends just before a keyframe or at the end of the file); the frames between are copied unchanged,
///   and the parts are joined with their parameter sets in the stream (`avc3`). The sound of the range
///   is re-encoded (AAC; Opus into WebM). Other sources (VP8, VP9, MJPEG), WebM copies, Matroska sources copied into MP4
///   or MOV, ranges without a keyframe to copy from, or files whose frames cannot be read are decoded
///   and re-encoded whole; `TrimResult.strategy` says which was done.
/// - `.keyframe` (asked for: `capture trim --fast`, `fast=true`): the streams are copied, not
///   re-encoded. The copy starts at the keyframe at or before `from` (every stream moves there
///   together, so sound stays in sync) and ends at `to`, so it may start earlier than asked.
public enum VideoEditor {
    /// How a trim cuts: exactly, or at keyframes.
    public enum TrimMode: String, Sendable, CaseIterable {
        /// Frame-accurate; re-encodes the edges of the range (H.264), or the whole range.
        case exact
        /// Keyframe-aligned start, no re-encoding (fast; the copy may start before the time asked for).
        case keyframe
    }

    /// What a trim re-encoded.
    public enum TrimStrategy: String, Sendable, CaseIterable {
        /// Nothing: every stream was copied (a keyframe trim).
        case copy
        /// The video's edges only (up to the first keyframe in the range, from the last one); the
        /// video between them was copied, the sound re-encoded.
        case edges
        /// Every stream over the whole range.
        case whole
    }

    /// What a trim produced.
    public struct TrimResult: Sendable {
        /// The video that was trimmed (never modified).
        public var source: String
        /// The new file.
        public var location: String
        /// How the copy was cut.
        public var mode: TrimMode
        /// The start asked for, in seconds.
        public var requestedStart: Double
        /// The end asked for, in seconds.
        public var requestedEnd: Double
        /// The new file's duration in seconds (as GStreamer's discoverer reads it).
        public var duration: Double
        /// The new file's size in bytes.
        public var size: Int64
        /// True when the new file has an audio track.
        public var hasAudio: Bool
        /// What was re-encoded.
        public var strategy: TrimStrategy
        /// With `.edges`: the part of the source (seconds, from keyframe to keyframe) whose video
        /// was copied unchanged; nil otherwise.
        public var copiedRange: Range<Double>?
    }

    /// Writes the part `from ..< to` (seconds) of `source` to `location` (`%d` patterns and taken names
    /// move on to a free name; the container follows the extension: mp4, m4v, mov, mkv, webm).
    /// Frame-exact unless `mode` is `.keyframe`.
    public static func trim(
        videoAt source: String, from start: Double, to end: Double, saveTo location: String,
        mode: TrimMode = .exact
    ) async throws(CaptureError) -> TrimResult {
        try await runBlocking("capture.video-editor") { () throws(CaptureError) -> TrimResult in
            // The trimmer's callbacks hold it weakly: it lives until the pipeline is gone.
            let trimmer = Trimmer(source: source, start: start, end: end, location: location, mode: mode)
            defer { withExtendedLifetime(trimmer) {} }
            return try trimmer.run()
        }
    }
}

/// One trim: `filesrc ! parsebin` (keyframe) or `filesrc ! decodebin` (exact), each stream linked to
/// the muxer as its pad appears (through encoders when exact), the muxer into a temporary file next to
/// the destination. The demuxer's pads are blocked until every stream is linked, then the range is
/// asked for with one seek sent into the demuxer, so the muxer sees nothing from before the range.
final class Trimmer: @unchecked Sendable {
    // @unchecked: `state` is a Locked; everything else is set in init and only read, from the thread
    // that runs the trim and from the demuxer's streaming threads (pad-added, the block probes).
    let source: String
    let start: Double
    let end: Double
    let location: String
    let mode: VideoEditor.TrimMode
    /// The kinds of stream written ("video", "audio"); the others are left unlinked (a part of an
    /// edges-only trim holds one kind).
    let kinds: Set<String>
    /// For a video part of an exact trim (`EdgeTrim`), where it seeks and which frames it keeps; nil
    /// otherwise (the seek is `start ..< end`, every frame the demuxer gives is kept). Such a part's
    /// video is encoded without B-frames, so that its presentation times start where its segment does.
    let selection: FrameSelection?
    var isEdgePart: Bool { selection != nil }

    private struct State {
        var linked: [String] = []
        var blocked: Set<String> = []
        /// Streams that passed the seek's flush: their buffers are from the range.
        var flushed: Set<String> = []
        var failure: String?
    }
    private let state = Locked(State())
    /// The demuxer's first linked pad: the seek is sent into the demuxer through it.
    private let firstPad = Locked<Pad?>(nil)

    init(
        source: String, start: Double, end: Double, location: String, mode: VideoEditor.TrimMode, kinds: Set<String> = ["video", "audio"],
        selection: FrameSelection? = nil
    ) {
        (self.source, self.start, self.end, self.location, self.mode, self.kinds) = (source, start, end, location, mode, kinds)
        self.selection = selection
    }

    func run() throws(CaptureError) -> VideoEditor.TrimResult {
        try FileNaming.checkLocation(location)
        guard let container = MovieContainer(pathExtension: URL(fileURLWithPath: location).pathExtension) else {
            throw .invalidLocation(path: location, reason: "the extension must be .mp4, .m4v, .mov, .mkv or .webm (it chooses the container)")
        }
        let media = try MediaFiles.probe(source, needsVideo: true)
        let duration = media.durationSeconds
        // A range may end at the end (the discoverer's duration is rounded to the nanosecond).
        for time in [start, end] where !time.isFinite || time < 0 || time > duration + 0.001 {
            throw .timeOutOfRange(path: source, time: time, duration: duration)
        }
        guard start < end else { throw .invalidTimeRange(path: source, from: start, to: end) }
        let codecs = try plan(container: container, media: media)
        // An exact trim is planned from the times of the source's frames, and refused, before anything
        // is written, when its range holds none.
        var exact: EdgeTrim?
        if mode == .exact, let frames = EdgeTrim.frames(of: source, timeout: .seconds(30) + .seconds(duration)) {
            exact = try EdgeTrim(source: source, media: media, container: container, start: start, end: end, frames: frames)
        }

        let target = FileNaming.isPattern(location) ? FileNaming.nextFree(location) : location
        let temporary = try MediaFiles.temporary(for: target, extension: container.fileExtension)
        defer { unlink(temporary) }
        var strategy: VideoEditor.TrimStrategy = mode == .keyframe ? .copy : .whole
        var copiedRange: Range<Double>?
        if let exact {
            try exact.write(into: temporary, target: target)
            (strategy, copiedRange) = (exact.copied == nil ? .whole : .edges, exact.copied)
        } else {
            try encode(
                into: temporary, container: container, codecs: codecs, expectedStreams: media.audio == nil ? 1 : 2,
                timeout: .seconds(60) + .seconds((end - start) * 20))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: temporary)[.size] as? Int64) ?? 0
        guard size > 0, let written = MediaInfo.discover(temporary), written.video != nil else {
            throw .editingFailed(path: source, reason: "the trimmed copy did not come out readable")
        }
        let path = try MediaFiles.linkNew(temporary, to: target)
        return VideoEditor.TrimResult(
            source: source, location: path, mode: mode, requestedStart: start, requestedEnd: end,
            duration: written.durationSeconds, size: size, hasAudio: written.audio != nil,
            strategy: strategy, copiedRange: copiedRange)
    }

    /// The encoders (exact) or the stream copies (keyframe) for the container; refuses a copy the
    /// container cannot hold.
    func plan(container: MovieContainer, media: MediaInfo) throws(CaptureError) -> (video: MovieVideoCodec, audio: MovieAudioCodec?) {
        switch mode {
        case .exact:
            return (container.defaultVideoCodec, media.audio == nil ? nil : container.defaultAudioCodec)
        case .keyframe:
            let video: MovieVideoCodec? =
                switch media.video?.codec {
                case "video/x-h264": .h264
                case "video/x-vp8": .vp8
                case "video/x-vp9": .vp9
                case "image/jpeg": .mjpeg
                default: nil
                }
            guard let video, container.videoCodecs.contains(video) else {
                throw .invalidConfiguration(
                    object: "trim of \(source)",
                    reason:
                        "its video (\(media.video?.codec ?? "unknown")) cannot be copied into a \(container.rawValue) file without re-encoding; choose another extension or trim exactly"
                )
            }
            var audio: MovieAudioCodec?
            if let codec = media.audio?.codec {
                audio = codec == "audio/mpeg" ? .aac : codec == "audio/x-opus" ? .opus : nil
                guard let audio, container.audioCodecs.contains(audio) else {
                    throw .invalidConfiguration(
                        object: "trim of \(source)",
                        reason:
                            "its audio (\(codec)) cannot be copied into a \(container.rawValue) file without re-encoding; choose another extension or trim exactly"
                    )
                }
            }
            return (video, audio)
        }
    }

    /// The compressed video a part that keeps only the sound leaves undecoded.
    static let compressedVideo = "video/x-h264; video/x-h265; video/x-vp8; video/x-vp9; video/x-av1; image/jpeg"

    /// The queue between a stream-copying demuxer and the muxer: one multiqueue for every stream.
    ///
    /// The demuxer pushes all its streams from one thread, and the muxer takes them in timestamp
    /// order, waiting for a buffer on every pad. After a keyframe seek the demuxer sends the video from
    /// the keyframe before the range's (aligned) start — up to a whole keyframe interval that the muxer
    /// then drops — while the sound starts at the range: the video runs that far behind. A queue per
    /// stream bounded in time (it was 2 s) fills with video while the muxer waits for sound the
    /// blocked demuxer thread can no longer push: a deadlock as soon as the keyframe interval reaches
    /// the bound (2 s intervals hung; 1 s intervals worked). A multiqueue bounded in buffers lets a
    /// stream's queue grow while another stream's queue is empty, and only then, so it holds no more
    /// than the streams' skew.
    static let copyQueue = ElementSpec("multiqueue", name: "trim_queue", [("max-size-buffers", "32"), ("max-size-bytes", "0"), ("max-size-time", "0")])

    /// The elements a stream goes through between the demuxer and the muxer (behind the copy queue when
    /// the streams are copied).
    private func chain(for kind: String, codecs: (video: MovieVideoCodec, audio: MovieAudioCodec?)) -> [ElementSpec] {
        guard mode == .exact else { return [] }
        var elements = [
            ElementSpec("queue", name: "trim_\(kind)_queue", [("max-size-buffers", "0"), ("max-size-bytes", "0"), ("max-size-time", "2000000000")])
        ]
        if kind == "video" {
            elements.append(ElementSpec("videoconvert", name: "trim_video_convert"))
            switch codecs.video {
            case .h264:
                elements += [
                    ElementSpec(
                        "x264enc", name: "trim_video_encoder",
                        [("speed-preset", "veryfast"), ("pass", "qual"), ("quantizer", "20"), ("key-int-max", "60")] + (isEdgePart ? [("bframes", "0")] : [])),
                    ElementSpec("h264parse", name: "trim_video_parse"),
                ]
            default:
                elements.append(
                    ElementSpec(
                        codecs.video.encoderFactory, name: "trim_video_encoder",
                        [("deadline", "1"), ("cpu-used", "8"), ("target-bitrate", "4000000"), ("threads", "2")]))
            }
        } else if let audio = codecs.audio, let factory = audio.encoderFactory {
            elements += [
                ElementSpec("audioconvert", name: "trim_audio_convert"), ElementSpec("audioresample", name: "trim_audio_resample"),
                ElementSpec(factory, name: "trim_audio_encoder"),
            ]
            if factory == "voaacenc" || factory == "avenc_aac" { elements.append(ElementSpec("aacparse", name: "trim_audio_parse")) }
        }
        return elements
    }

    func encode(
        into temporary: String, container: MovieContainer, codecs: (video: MovieVideoCodec, audio: MovieAudioCodec?),
        expectedStreams: Int, timeout: Duration
    ) throws(CaptureError) {
        // A part that keeps only the sound leaves the video compressed: decodebin does not decode it.
        let demuxSpec =
            mode == .keyframe
            ? ElementSpec("parsebin", name: "trim_demux")
            : kinds.contains("video")
                ? ElementSpec("decodebin", name: "trim_demux")
                : ElementSpec("decodebin", name: "trim_demux", [("caps", "audio/x-raw; " + Trimmer.compressedVideo)])
        let pipeline: Pipeline
        let demux: Element
        let mux: Element
        let bin: Bin
        do {
            pipeline = try Pipeline.make(name: "trimmer")
            bin = try BinBuilder.bin(
                named: "trim",
                chains: [
                    Chain(input: nil, elements: [ElementSpec("filesrc", name: "trim_source"), demuxSpec]),
                    Chain(
                        input: nil,
                        elements: [ElementSpec(container.muxerFactory, name: "trim_mux"), ElementSpec("filesink", name: "trim_sink", [("async", "false")])]),
                ] + (mode == .keyframe ? [Chain(input: nil, elements: [Trimmer.copyQueue])] : []))
            try bin.child(named: "trim_source")?.set("location", source)
            try bin.child(named: "trim_sink")?.set("location", temporary)
            try pipeline.add(bin)
            guard let demuxer = bin.child(named: "trim_demux"), let muxer = bin.child(named: "trim_mux") else {
                throw GStreamerError.noSuchPad(element: "trim", pad: "demux/mux")
            }
            (demux, mux) = (demuxer, muxer)
        } catch {
            throw Trimmer.buildFailure(error, source: source)
        }
        defer { Trimmer.stop(pipeline) }
        // Streams are linked as the demuxer finds them; each is held at its first buffer until the seek.
        demux.onPadAdded { [weak self, weak bin, weak mux] pad in
            guard let self, let bin, let mux else { return }
            let caps = pad.currentCaps?.structures.first?.name ?? pad.queryCaps()?.structures.first?.name ?? ""
            let kind = caps.hasPrefix("video/") || caps == "image/jpeg" ? "video" : caps.hasPrefix("audio/") ? "audio" : ""
            let fresh = self.state.withLock { state -> Bool in
                guard !kind.isEmpty, self.kinds.contains(kind), !state.linked.contains(kind) else { return false }
                state.linked.append(kind)
                return true
            }
            guard fresh else { return }
            do {
                let elements = try self.chain(for: kind, codecs: codecs).map { spec throws(GStreamerError) in try BinBuilder.element(spec) }
                for element in elements { try bin.add(element) }
                for (upstream, downstream) in zip(elements, elements.dropFirst()) { try upstream.link(to: downstream) }
                let sink: Pad, lastPad: Pad
                if let first = elements.first, let last = elements.last {
                    guard let input = first.staticPad("sink"), let output = last.staticPad("src") else {
                        throw GStreamerError.noSuchPad(element: first.name, pad: "sink/src")
                    }
                    (sink, lastPad) = (input, output)
                } else {
                    // Stream copy: through the shared multiqueue (its src_N comes with sink_N).
                    guard let queue = bin.child(named: Trimmer.copyQueue.name) else {
                        throw GStreamerError.noSuchPad(element: Trimmer.copyQueue.name, pad: "sink_%u")
                    }
                    let input = try queue.requestPad("sink_%u")
                    let outputName = "src_" + input.name.dropFirst("sink_".count)
                    guard let output = queue.staticPad(outputName) else { throw GStreamerError.noSuchPad(element: queue.name, pad: outputName) }
                    (sink, lastPad) = (input, output)
                }
                // The muxer's pad of the stream's kind: a queue's caps (anything) would fit any template.
                guard let muxPad = try? mux.requestPad("\(kind)_%u") else {
                    throw GStreamerError.noSuchPad(element: mux.name, pad: "\(kind)_%u")
                }
                if kind == "video", self.isEdgePart, muxPad.hasProperty("trak-timescale") {
                    try muxPad.set("trak-timescale", EdgeTrim.videoTimescale)
                }
                try lastPad.link(to: muxPad)
                for element in elements { try element.syncStateWithParent() }
                // Held at the first buffer until the seek's flush has gone through this pad: nothing
                // from before the range reaches the muxer.
                pad.addProbe([.block, .buffer]) { [weak self] _, _ in
                    guard let self else { return .remove }
                    return self.state.withLock { state in
                        if state.flushed.contains(kind) { return .remove }
                        state.blocked.insert(kind)
                        return .ok
                    }
                }
                pad.addProbe([.eventDownstream, .eventFlush]) { [weak self] _, info in
                    guard info.isFlushStop else { return .ok }
                    self?.state.withLock { _ = $0.flushed.insert(kind) }
                    return .remove
                }
                if let selection = self.selection, kind == "video" {
                    pad.addProbe([.buffer]) { [weak self] pad, info in
                        guard let self, self.state.withLock({ $0.flushed.contains(kind) }), let buffer = info.buffer, let pts = buffer.pts else { return .ok }
                        guard let time = pad.streamTime(of: pts), selection.window.contains(time) else { return .drop }
                        let (dts, duration) = (buffer.dts, buffer.duration)
                        if let last = selection.lastDecoded, max(time, last.time) - min(time, last.time) < 1000 {
                            info.setBufferDuration(last.duration)
                        } else if let duration, time + duration > selection.end {
                            info.setBufferDuration(selection.end > time ? selection.end - time : 0)
                        }
                        if selection.shift > 0, pts >= selection.shift {
                            info.setBufferTimestamps(pts: pts - selection.shift, dts: dts.map { $0 >= selection.shift ? $0 - selection.shift : 0 })
                        }
                        return .ok
                    }
                }
                try pad.link(to: sink)
                self.firstPad.withLock { if $0 == nil { $0 = pad } }
            } catch {
                self.state.withLock { $0.failure = "the \(kind) stream could not be linked: \(error)" }
            }
        }
        do {
            try pipeline.setState(.paused)
        } catch {
            throw .editingFailed(path: source, reason: "the pipeline would not start: \(error)")
        }
        // Every stream found and held (bounded), then one seek into the demuxer for the range.
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let message = pipeline.bus.pop(timeout: 10_000_000, kinds: [.error]) {
                throw .editingFailed(path: source, reason: message.error?.description ?? "GStreamer failed while reading the file")
            }
            let snapshot = state.value
            if let failure = snapshot.failure { throw .editingFailed(path: source, reason: failure) }
            // A demuxer pushes every stream from one thread: once it is held at one stream, the others
            // are linked and wait; a decoder's streams each have a thread and are held one by one.
            if snapshot.linked.count >= expectedStreams && !snapshot.blocked.isEmpty { break }
            guard ContinuousClock.now < deadline else {
                throw .timedOut(
                    waitingFor:
                        "the streams of \(source) to be found (\(expectedStreams) expected; linked: \(snapshot.linked.joined(separator: ", ")); held: \(snapshot.blocked.sorted().joined(separator: ", ")))",
                    seconds: 10)
            }
        }
        let flags: SeekFlags = mode == .exact ? [.flush, .accurate] : [.flush, .keyUnit, .snapBefore]
        let startNanoseconds = selection?.seekStart ?? EdgeTrim.nanoseconds(start)
        let endNanoseconds = selection == nil ? EdgeTrim.nanoseconds(end) : selection?.seekStop
        guard let pad = firstPad.value, pad.sendSeek(start: startNanoseconds, stop: endNanoseconds, flags: flags) else {
            throw .editingFailed(path: source, reason: "the file cannot be seeked to \(CaptureError.seconds(start)) s")
        }
        try Trimmer.play(pipeline, source: source, location: location, timeout: timeout, job: "the trim")
    }

    /// The typed error for a pipeline of the trim of `source` that could not be built.
    static func buildFailure(_ error: any Error, source: String) -> CaptureError {
        if let error = error as? GStreamerError { return CaptureError(error, object: "the trim of \(source)") }
        return .editingFailed(path: source, reason: "\(error)")
    }

    /// Stops a trim's pipeline and drops what its bus still holds.
    static func stop(_ pipeline: Pipeline) {
        _ = try? pipeline.setState(.null)
        pipeline.bus.setFlushing(true)
    }

    /// Plays a pipeline that writes a file for `location` to its end of stream (at most `timeout`);
    /// a full disk, an unwritable file and other errors become typed errors, and so does `failure`
    /// (checked between bus messages) once it has a reason. The caller stops the pipeline.
    static func play(
        _ pipeline: Pipeline, source: String, location: String, timeout: Duration, job: String,
        failure: () -> String? = { nil }
    ) throws(CaptureError) {
        do {
            try pipeline.setState(.playing)
        } catch {
            throw .editingFailed(path: source, reason: "the pipeline would not play: \(error)")
        }
        let finish = ContinuousClock.now + timeout
        while ContinuousClock.now < finish {
            if let reason = failure() { throw .editingFailed(path: source, reason: reason) }
            guard let message = pipeline.bus.pop(timeout: 200_000_000, kinds: [.eos, .error]) else { continue }
            if message.kind == .eos { return }
            let error = message.error
            if error?.isResourceError == true, error?.code == BusError.resourceNoSpaceLeft { throw .diskFull(path: location) }
            if error?.isResourceError == true, error?.code == BusError.resourceOpenReadWrite || error?.code == BusError.resourceWrite {
                throw .locationNotWritable(path: location, reason: error?.message ?? "the file could not be written")
            }
            throw .editingFailed(path: source, reason: error?.description ?? "GStreamer failed during \(job)")
        }
        throw .timedOut(waitingFor: "\(job) of \(source) to finish", seconds: timeout.seconds)
    }
}
