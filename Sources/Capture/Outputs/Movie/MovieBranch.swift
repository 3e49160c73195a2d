import Foundation
import GStreamer

/// What a movie recording was compiled to: its branch and the facts the recording needs at run time.
struct MovieBranchPlan: Sendable {
    var segment: BranchSegment
    var container: MovieContainer
    var videoCodec: MovieVideoCodec
    var audioCodec: MovieAudioCodec?
    /// The inputs the branch reads (video first).
    var videoInput: String
    var audioInput: String?
    var size: Size?
    var frameRate: FrameRate?
    /// The stream's encoder the recording reads instead of encoding its own, if any.
    var sharedEncoder: SharedEncoder?
}

/// Builds the branch of a movie recording: one chain per input (gate queue, conversion, encoder) into
/// the muxer, and the muxer into a file sink.
///
/// ```
/// camera_tee. ! queue ! videoconvert ! videoscale ! video/x-raw,format=I420,WxH ! videorate ! framerate ! x264enc ! h264parse ! mux.
/// mic_tee.    ! queue ! audioconvert ! audioresample ! audio/x-raw,rate=48000 ! voaacenc ! mux.
/// mp4mux fragment-duration=1000 ! filesink
/// ```
enum MovieBranchBuilder {
    /// Element names inside a movie branch, by role.
    struct Names {
        let output: String
        var videoQueue: String { "\(output)_queue" }
        var videoEncoder: String { "\(output)_encode" }
        /// The queue of encoded frames a recording that reads a shared encoder starts with.
        var encodedQueue: String { "\(output)_encoded_queue" }
        var parser: String { "\(output)_parse" }
        var audioQueue: String { "\(output)_audio_queue" }
        var audioEncoder: String { "\(output)_audio_encode" }
        var muxer: String { "\(output)_mux" }
        var sink: String { "\(output)_sink" }
    }

    /// `mayShare`: the recording may read a stream's encoder of the same picture (`SharedEncoder`)
    /// instead of encoding its own (false when the movie output draws overlays of its own).
    static func build(
        output: String, description: String, settings: MovieSettings, location: String,
        context: BranchContext, mayShare: Bool = true
    ) throws(CaptureError) -> MovieBranchPlan {
        let names = Names(output: output)
        guard let videoInput = context.videoInput else { throw .noVideoInput(output: output) }
        let audioSource: SourceSegment?
        if let wanted = settings.audioInput {
            guard let found = context.audioInputs.first(where: { $0.input == wanted }) else {
                throw .invalidMovieSettings(output: output, reason: "audio input '\(wanted)' is not an audio input of the session")
            }
            audioSource = found
        } else {
            audioSource = context.audioInputs.first
        }
        let format = try settings.resolvedFormat(for: location, hasAudioInput: audioSource != nil, output: output)
        do { try GStreamer.initialize() } catch { throw CaptureError(error, object: description) }
        // MP4/MOV need VP9's chroma format in the caps, which only the parser fills in.
        let needsVP9Parser = format.videoCodec == .vp9 && (format.container == .mp4 || format.container == .mov)
        // H.264: the encoder the settings ask for, or the best that works here (H264EncoderSelection).
        let h264Encoder = format.videoCodec == .h264 ? try context.environment.encoders.resolve(settings.encoder, neededBy: description) : nil
        var factories =
            [format.container.muxerFactory, h264Encoder?.rawValue ?? format.videoCodec.encoderFactory, "filesink"]
            + [format.audioCodec?.encoderFactory].compactMap({ $0 })
        if needsVP9Parser { factories.append("vp9parse") }
        for factory in factories {
            guard GStreamer.hasElement(factory) else { throw .elementMissing(factory: factory, neededBy: description) }
        }

        let size = settings.size ?? context.outputSize
        if let wanted = settings.size, let frame = videoInput.format?.device.size, !frame.covers(wanted) {
            throw .invalidMovieSettings(
                output: output, reason: "size \(wanted) is larger than the \(frame) frames of input '\(videoInput.input)'; upscaling is refused")
        }
        let rate = settings.frameRate ?? context.frameRate
        let fragment = settings.movieFragmentInterval.flatMap { $0 > .zero ? $0 : nil }
        // A key frame at least once per fragment, so a file cut after any fragment plays from the start
        // and every fragment can be decoded on its own.
        let keyInterval = max(1, Int(((fragment ?? .seconds(2)).seconds * (rate?.value ?? 30)).rounded()))

        // Muxer and file first, so that the chains below link into an element already declared.
        var muxer = ElementSpec(format.container.muxerFactory, name: names.muxer)
        switch format.container {
        case .mp4, .mov:
            if let fragment { muxer.properties.append(.init("fragment-duration", "\(max(1, Int(fragment.seconds * 1000)))")) }
        case .mkv, .webm:
            if let fragment { muxer.properties.append(.init("max-cluster-duration", "\(Int64(fragment.seconds * 1e9))")) }
        }
        let sink = ElementSpec(
            "filesink", name: names.sink,
            [
                ("location", location), ("sync", "false"), ("async", "false"),
                // Every buffer reaches the kernel at once: a killed process leaves all finished fragments.
                ("buffer-mode", "unbuffered"), ("enable-last-sample", "false"),
            ])
        var chains = [Chain(input: nil, elements: [muxer, sink])]

        // Video: the shared head (queue, convert, scale, rotation), a steady frame rate, the encoder.
        var (video, bitRate) = try steadyVideo(
            output: output, settings: settings, size: size, rate: rate,
            format: h264Encoder?.inputFormat ?? "I420", container: format.container, context: context)
        // A stream of the same picture encodes it already: the recording reads that encoder (one
        // encode, a payloader and a muxer), starting at a key frame it asks for.
        let signature = SharedEncoder.signature(of: video, prefix: output)
        let shared =
            mayShare && format.container != .webm
            ? h264Encoder.flatMap { encoder in
                context.sharedEncoders.first {
                    $0.input == videoInput.input && $0.serves(signature: signature, encoder: encoder, bitRate: settings.bitRate, keyInterval: keyInterval)
                }
            } : nil
        if let shared {
            video = [
                ElementSpec(
                    "queue", name: names.encodedQueue, [("max-size-buffers", "0"), ("max-size-bytes", "0"), ("max-size-time", "3000000000")]),
                ElementSpec("h264parse", name: names.parser),
            ]
            chains.append(Chain(input: shared.name, elements: video, into: names.muxer))
        }
        switch format.videoCodec {
        case _ where shared != nil:
            break
        case .h264:
            video += h264(output: output, encoder: h264Encoder ?? .x264enc, name: names.videoEncoder, bitRate: bitRate, keyInterval: keyInterval)
        case .vp8, .vp9:
            video.append(
                ElementSpec(
                    format.videoCodec.encoderFactory, name: names.videoEncoder,
                    [
                        ("deadline", "1"), ("cpu-used", format.videoCodec == .vp8 ? "8" : "7"), ("lag-in-frames", "0"),
                        ("target-bitrate", "\(bitRate)"), ("keyframe-max-dist", "\(keyInterval)"), ("threads", "2"),
                    ] + (format.videoCodec == .vp9 ? [("row-mt", "true")] : [])))
            if needsVP9Parser { video.append(ElementSpec("vp9parse", name: "\(output)_parse")) }
        case .mjpeg:
            video.append(ElementSpec("jpegenc", name: names.videoEncoder, [("quality", "85")]))
        }
        if shared == nil { chains.append(Chain(input: videoInput.input, elements: video, into: names.muxer)) }

        // Audio: a queue deep enough for a second, conversion to what the encoder takes, the encoder.
        if let audioCodec = format.audioCodec, let audioSource, let factory = audioCodec.encoderFactory {
            var audio: [ElementSpec] = [
                ElementSpec("queue", name: names.audioQueue, [("max-size-buffers", "0"), ("max-size-bytes", "0"), ("max-size-time", "1000000000")]),
                ElementSpec("audioconvert", name: "\(output)_audio_convert"),
                ElementSpec("audioresample", name: "\(output)_audio_resample"),
                ElementSpec("capsfilter", name: "\(output)_audio_format", [("caps", "audio/x-raw,rate=48000")]),
            ]
            var encoder = ElementSpec(factory, name: names.audioEncoder)
            if let audioBitRate = settings.audioBitRate { encoder.properties.append(.init("bitrate", "\(audioBitRate)")) }
            audio.append(encoder)
            if factory == "avenc_aac" || factory == "voaacenc" {
                audio.append(ElementSpec("aacparse", name: "\(output)_audio_parse"))
            }
            chains.append(Chain(input: audioSource.input, elements: audio, into: names.muxer))
        }
        var segment = BranchSegment(output: output, kind: "movie", chains: chains, writesFile: true)
        segment.reads = shared.map { [$0] } ?? []
        return MovieBranchPlan(
            segment: segment, container: format.container, videoCodec: format.videoCodec, audioCodec: format.audioCodec,
            videoInput: videoInput.input, audioInput: format.audioCodec == nil ? nil : audioSource?.input,
            size: context.rotatedSize(size), frameRate: rate, sharedEncoder: shared)
    }

    /// The video head (queue, convert, scale, rotation) at a steady frame rate, and the bit rate a
    /// movie of it gets (`settings.bitRate`, else about 0.1 bit per pixel per frame).
    static func steadyVideo(
        output: String, settings: MovieSettings, size: Size?, rate: FrameRate?, format: String,
        container: MovieContainer, context: BranchContext
    ) throws(CaptureError) -> ([ElementSpec], Int) {
        let turns = Self.turns(of: context.connection, in: container)
        var video = try context.videoHead(leaky: false, maxBuffers: 8, size: size, format: format, turn: turns.pixels)
        if let rate {
            video.append(ElementSpec("videorate", name: "\(output)_rate", [("skip-to-first", "true")]))
            video.append(ElementSpec("capsfilter", name: "\(output)_framerate", [("caps", "video/x-raw,framerate=\(rate.caps)")]))
        }
        let pixels = context.rotatedSize(size) ?? Size(width: 640, height: 480)
        return (video, settings.bitRate ?? max(200_000, Int(Double(pixels.area) * (rate?.value ?? 30) * 0.1)))
    }

    /// How a movie in `container` shows the connection's turn: what is done to the pixels, and what
    /// the track matrix asks a player for (`MP4TrackMatrix`). MP4 and MOV tag it, unless the connection
    /// `rotatesPixels`: a mirror stays in the pixels (players honour a matrix's rotation, not always
    /// its mirror), and the matrix turns the mirrored picture the other way round (a turn then a
    /// mirror is a mirror then the opposite turn). Matroska and WebM turn the pixels: GStreamer
    /// 1.22's matroskamux writes no orientation.
    static func turns(of connection: ConnectionSettings, in container: MovieContainer) -> (pixels: PixelTurn, matrix: PixelTurn) {
        let turn = connection.turn
        guard !connection.rotatesPixels, container == .mp4 || container == .mov else { return (turn, .none) }
        return (PixelTurn(rotation: 0, mirrored: turn.mirrored), PixelTurn(rotation: turn.mirrored ? (360 - turn.rotation) % 360 : turn.rotation))
    }

    /// An H.264 encoder tuned for live use, with a key frame at least every `keyInterval` frames, then h264parse.
    static func h264(output: String, encoder: H264Encoder, name: String, bitRate: Int, keyInterval: Int) -> [ElementSpec] {
        [encoder.element(name: name, bitRate: bitRate, keyInterval: keyInterval), ElementSpec("h264parse", name: Names(output: output).parser)]
    }
}
