import Foundation
import GStreamer

/// A movie output's pre-roll: while the session runs the output's branch encodes all the time
/// (`... ! H.264 encoder key-int-max=1 s ! h264parse ! appsink`) and keeps the last `length` of encoded video
/// in a ring of whole GOPs (it starts at a key frame). A recording takes the ring from the latest key
/// frame at least `length` before the trigger, then the live frames, into a file pipeline of its own
/// (`appsrc ! mp4mux fragment-duration=... ! filesink`), so the file begins `length` before the
/// trigger, within one GOP, and is fragmented (crash-safe) as every recording is.
final class PreRollBuffer: @unchecked Sendable {
    // @unchecked: the state is behind `Locked`; Sample and the writer are reference types used under it.
    struct Entry {
        let sample: Sample
        /// The buffer's PTS as it is (what the file's timestamps are moved from).
        let pts: UInt64
        /// Its running time in the session (what the ring and the trigger are measured in).
        let time: UInt64
        let duration: UInt64?
        let key: Bool
        let bytes: Int
    }

    private struct State: @unchecked Sendable {
        // @unchecked: GstSample references (immutable) and the writer (its own locking).
        var ring: [Entry] = []
        var writer: PreRollWriter?
    }

    private let state = Locked(State())

    /// A key frame every second: a recording starts at most this much earlier than asked.
    static let groupOfPictures: Duration = .seconds(1)

    /// Called on the branch's streaming thread for each encoded frame; feeds the writer, if any, and
    /// the ring. Returns the writer's verdict (nil: no recording).
    func receive(_ view: SampleView, length: Duration) -> PreRollWriter.Verdict? {
        guard let pts = view.presentationTime, let time = view.runningTime else { return nil }
        let entry = Entry(
            sample: Sample(view), pts: pts, time: time, duration: view.buffer?.duration,
            key: view.isKeyFrame, bytes: view.buffer?.size ?? 0)
        let span = UInt64(length.seconds * 1e9)
        return state.withLock { state -> PreRollWriter.Verdict? in
            state.ring.append(entry)
            // Keep from the latest key frame that is at least `span` old (older GOPs are not needed).
            if let cut = state.ring.lastIndex(where: { $0.key && $0.time + span <= time }), cut > 0 {
                state.ring.removeFirst(cut)
            }
            return state.writer?.write(entry)
        }
    }

    /// Starts `writer` with the ring: from the latest key frame at least `length` before the newest
    /// frame (or the oldest key frame there is). Returns the first frame's timestamp, nil when the ring
    /// holds no key frame yet (the writer then starts at the next one).
    func begin(_ writer: PreRollWriter, length: Duration) -> UInt64? {
        let span = UInt64(length.seconds * 1e9)
        return state.withLock { state -> UInt64? in
            state.writer = writer
            guard let newest = state.ring.last?.time else { return nil }
            let start = state.ring.lastIndex(where: { $0.key && $0.time + span <= newest }) ?? state.ring.firstIndex(where: \.key)
            guard let start else { return nil }
            for entry in state.ring[start...] { _ = writer.write(entry) }
            return state.ring[start].time
        }
    }

    /// Detaches the writer (no frame reaches it after this returns).
    func end(_ writer: PreRollWriter) {
        state.withLock { state in if state.writer === writer { state.writer = nil } }
    }

    /// The writer now recording, if any.
    var writer: PreRollWriter? { state.withLock { $0.writer } }

    /// Forgets the ring (the branch left the pipeline).
    func clear() { state.withLock { $0.ring = [] } }
}

/// The file pipeline of one pre-roll recording: `appsrc ! MUXER ! filesink`, fed encoded frames whose
/// timestamps are moved to start at 0.
final class PreRollWriter: @unchecked Sendable {
    // @unchecked: GStreamer objects (appsrc is made to be pushed into from any thread); the rest is
    // immutable or `Locked`.
    enum Verdict { case written, limitReached(CaptureError) }

    let recording: MovieRecording
    let output: String
    private let pipeline: Pipeline
    private let source: Element
    private let shift = Locked<UInt64?>(nil)
    /// Signalled when the end of the stream, or an error, reached the bus.
    private let ended = DispatchSemaphore(value: 0)
    private let onFirstFrame: @Sendable (UInt64) -> Void

    init(recording: MovieRecording, output: String, container: MovieContainer, onFirstFrame: @escaping @Sendable (UInt64) -> Void) throws(CaptureError) {
        self.recording = recording
        self.output = output
        self.onFirstFrame = onFirstFrame
        do throws(GStreamerError) {
            pipeline = try Pipeline.make(name: "\(output)_preroll_file")
            source = try Element.make("appsrc", name: "\(output)_preroll_source")
            try source.set("format", "time")
            try source.set("is-live", "false")
            try source.set("block", "false")
            try source.set("max-bytes", "\(512 << 20)")
            let muxer = try Element.make(container.muxerFactory, name: "\(output)_preroll_mux")
            if let fragment = recording.settings.movieFragmentInterval, fragment > .zero {
                switch container {
                case .mp4, .mov: try muxer.set("fragment-duration", "\(max(1, Int(fragment.seconds * 1000)))")
                case .mkv, .webm: try muxer.set("max-cluster-duration", "\(Int64(fragment.seconds * 1e9))")
                }
            }
            let sink = try Element.make("filesink", name: "\(output)_preroll_sink")
            try sink.set("location", recording.writePath)
            try sink.set("sync", "false")
            try sink.set("buffer-mode", "unbuffered")
            try pipeline.add(source)
            try pipeline.add(muxer)
            try pipeline.add(sink)
            // The video request pad by name: the appsrc has no caps yet, and a plain link could take another.
            if let pad = source.staticPad("src") { try pad.link(to: try muxer.requestPad("video_%u")) }
            try muxer.link(to: sink)
            sink.staticPad("sink")?.addProbe([.buffer, .eventDownstream]) { _, info in
                recording.trackWrite(info)
                return .ok
            }
        } catch {
            throw CaptureError(error, object: "the pre-roll recording of \(output)")
        }
        let ended = ended
        pipeline.bus.setSyncHandler { message in
            switch message.kind {
            case .eos:
                recording.state.withLock { $0.sawEOS = true }
                ended.signal()
            case .error:
                let reason = message.error?.message ?? "the file pipeline failed"
                recording.state.withLock { state in
                    if state.branchError == nil { state.branchError = .recordingFailed(output: output, location: recording.location, reason: reason) }
                }
                ended.signal()
            default:
                break
            }
        }
    }

    func start() throws(CaptureError) {
        do throws(GStreamerError) { _ = try pipeline.setState(.playing) } catch {
            throw CaptureError(error, object: "the pre-roll recording of \(output)")
        }
    }

    /// Writes one encoded frame (under the buffer's lock): the first must be a key frame.
    func write(_ entry: PreRollBuffer.Entry) -> Verdict {
        let first = shift.withLock { shift -> Bool? in
            if shift == nil {
                guard entry.key else { return nil }
                shift = entry.pts
                return true
            }
            return false
        }
        guard let first else { return .written }
        let decision = recording.state.withLock { $0.timeline.decide(.video, at: entry.time, duration: entry.duration) }
        switch decision {
        case .keep:
            let origin = shift.value ?? entry.pts
            source.pushSample(entry.sample.view, shiftedBackBy: origin)
            let (bytes, limit) = recording.state.withLock { state -> (Int64, Int64?) in
                state.encodedVideoFrames += 1
                state.mediaBytes += Int64(entry.bytes)
                return (state.mediaBytes, recording.settings.maxRecordedFileSize)
            }
            if first { onFirstFrame(entry.time) }
            if let limit, MovieRecording.estimatedFileSize(mediaBytes: bytes + 2 * Int64(entry.bytes)) >= limit {
                recording.state.withLock { $0.timeline.stopAtLatest() }
                return .limitReached(.maximumFileSizeReached(output: output, bytes: limit))
            }
            return .written
        case .drop:
            return .written
        case .limitReached:
            let limit = recording.settings.maxRecordedDuration ?? .zero
            return .limitReached(.maximumDurationReached(output: output, seconds: limit.seconds))
        }
    }

    /// Ends the file: the end of the stream through the muxer, then waits (bounded) for it to reach
    /// the file, and tears the pipeline down. Blocks the caller (the file pipeline has threads of its
    /// own: nothing it waits for needs the caller).
    func finish(timeout: Duration) {
        _ = source.sendEOS()
        _ = ended.wait(timeout: .now() + timeout.seconds)
        pipeline.bus.setFlushing(true)
        pipeline.bus.removeSyncHandler()
        _ = try? pipeline.setState(.null)
    }
}

enum PreRollBranch {
    /// The pre-roll branch: the video head, a steady frame rate, H.264 with a key frame a second, into
    /// an appsink (what the encoder makes goes to the ring and to a recording's file pipeline).
    static func build(output: String, description: String, settings: MovieSettings, context: BranchContext) throws(CaptureError) -> BranchSegment {
        let names = MovieBranchBuilder.Names(output: output)
        guard let videoInput = context.videoInput else { throw .noVideoInput(output: output) }
        let hasAudio = settings.audioInput.map { wanted in context.audioInputs.contains { $0.input == wanted } } ?? !context.audioInputs.isEmpty
        let format = try settings.resolvedFormat(for: settings.location, hasAudioInput: hasAudio, output: output)
        do { try GStreamer.initialize() } catch { throw CaptureError(error, object: description) }
        let encoder = try context.environment.encoders.resolve(settings.encoder, neededBy: description)
        for factory in [encoder.rawValue, "h264parse", "appsink", "appsrc", "filesink", format.container.muxerFactory] where !GStreamer.hasElement(factory) {
            throw .elementMissing(factory: factory, neededBy: description)
        }
        let size = settings.size ?? context.outputSize
        if let wanted = settings.size, let frame = videoInput.format?.device.size, !frame.covers(wanted) {
            throw .invalidMovieSettings(
                output: output, reason: "size \(wanted) is larger than the \(frame) frames of input '\(videoInput.input)'; upscaling is refused")
        }
        let rate = settings.frameRate ?? context.frameRate
        let keyInterval = max(1, Int((PreRollBuffer.groupOfPictures.seconds * (rate?.value ?? 30)).rounded()))
        var (video, bitRate) = try MovieBranchBuilder.steadyVideo(
            output: output, settings: settings, size: size, rate: rate,
            format: encoder.inputFormat, container: format.container, context: context)
        video += MovieBranchBuilder.h264(output: output, encoder: encoder, name: names.videoEncoder, bitRate: bitRate, keyInterval: keyInterval)
        video.append(ElementSpec("capsfilter", name: "\(output)_h264", [("caps", "video/x-h264,stream-format=avc,alignment=au")]))
        video.append(ElementSpec("appsink", name: names.sink, [("sync", "false"), ("async", "false"), ("enable-last-sample", "false")]))
        return BranchSegment(
            output: output, kind: "movie", chains: [Chain(input: videoInput.input, elements: video)],
            auxiliaryFactories: ["appsrc", format.container.muxerFactory, "filesink"])
    }
}
