import Foundation
import GStreamer

/// How a stream output encodes: the `.pipeline` keys of `output, kind=stream` besides its URL.
public struct StreamSettings: Hashable, Sendable {
    /// Video bit rate in bits per second (`bitrate`); nil: about 0.1 bit per pixel per frame.
    public var bitRate: Int?
    /// The frame size of the stream (`size`); nil: the session preset's size.
    public var size: Size?
    /// `audio-codec`: `aac` or `opus` streams the session's first audio input beside the video; nil
    /// (the default) or `MovieAudioCodec.none`: video only.
    public var audioCodec: MovieAudioCodec?
    /// The longest time between two key frames (a client that joins waits at most this long for its
    /// first picture; a new client also asks the encoder for one at once). Default 1 s.
    public var keyFrameInterval: Duration = .seconds(1)
    /// The H.264 encoder (`encoder`): `.automatic` (default, see `H264EncoderSelection`) or one forced.
    public var encoder: H264EncoderPreference = .automatic

    /// Settings with the given bit rate, size and audio codec (nil: the defaults above); the key frame
    /// interval and the encoder are set as properties.
    public init(bitRate: Int? = nil, size: Size? = nil, audioCodec: MovieAudioCodec? = nil) {
        self.bitRate = bitRate
        self.size = size
        self.audioCodec = audioCodec
    }

    /// The audio codec the stream carries, nil for none.
    var streamedAudio: MovieAudioCodec? { audioCodec == MovieAudioCodec.none ? nil : audioCodec }

    func check(output: String) throws(CaptureError) {
        if let bitRate, bitRate < 10_000 || bitRate > 100_000_000 {
            throw .invalidStreamSettings(output: output, reason: "bitrate \(bitRate) is outside 10000...100000000 bits per second")
        }
        if let size, size.width < 16 || size.height < 16 || size.width % 2 != 0 || size.height % 2 != 0 {
            throw .invalidStreamSettings(output: output, reason: "size \(size) must be even and at least 16x16")
        }
        if keyFrameInterval <= .zero || keyFrameInterval > .seconds(10) {
            throw .invalidStreamSettings(output: output, reason: "the key frame interval must be more than 0 and at most 10 s")
        }
    }
}

/// A live H.264 stream of the session (`kind=stream`): served over RTSP by the process itself, or
/// published to a media server over RTSP (RECORD) or SRT.
///
/// Its encoder (H.264 tuned for latency — a hardware encoder that works, else x264enc, see
/// `H264EncoderSelection` — a key frame every second, SPS/PPS before each) is a `SharedEncoder`: a
/// recording of the same picture reads it too instead of encoding again. Its branch reads the encoded
/// frames into an appsink; they go from there to the stream's own pipelines, which run apart from the
/// session's:
///
/// - **serve** (`rtsp://ADDRESS:PORT/PATH`): GStreamer's RTSP server, listening on ADDRESS:PORT on a
///   thread of its own, serves PATH; every client of the path shares one media
///   (`appsrc ! rtph264pay`), so two clients cost no second encode. A client that joins starts at a key
///   frame (the encoder is asked for one).
/// - **publish** (`rtsp://HOST:PORT/PATH`, `srt://HOST:PORT`): see `StreamPublisher`. A server that is
///   not there or goes away is retried with a back-off and reported as `stream-disconnected`; the
///   camera, the other outputs and a recording go on.
///
/// Like any output, a stream joins and leaves a running session live.
public final class CaptureStreamOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); mutable state is behind
    // `Locked`.
    private struct Settings: Sendable {
        var destination: StreamDestination
        var stream: StreamSettings
    }

    private struct Runtime: Sendable {
        var mount: RTSPMount?
        var publisher: StreamPublisher?
        /// The destination the mount or the publisher was made for.
        var destination: StreamDestination?
        var audio: MovieAudioCodec?
        var clients = 0
        /// A key frame was asked of the encoder and has not come yet.
        var keyFrameRequested = false
    }

    private let settingsState: Locked<Settings>
    private let runtime = Locked(Runtime())
    private let sentFrames = Locked(0)
    private let sentBytes = Locked(0)

    /// A stream output named `name` going to `destination`, encoded with `settings` (checked when the
    /// session compiles: `invalidStreamSettings`).
    public init(name: String = "stream", destination: StreamDestination, settings: StreamSettings = StreamSettings()) {
        settingsState = Locked(Settings(destination: destination, stream: settings))
        super.init(name: name)
    }

    /// A stream served at `url` (`rtsp://ADDRESS:PORT/PATH`). Typed error: `invalidStreamUrl`.
    public convenience init(name: String = "stream", serve url: String, settings: StreamSettings = StreamSettings()) throws(CaptureError) {
        self.init(name: name, destination: try .serving(url), settings: settings)
    }

    /// A stream published to `url` (`rtsp://HOST:PORT/PATH`, `srt://HOST:PORT`). Typed error: `invalidStreamUrl`.
    public convenience init(name: String = "stream", publish url: String, settings: StreamSettings = StreamSettings()) throws(CaptureError) {
        self.init(name: name, destination: try .publishing(url), settings: settings)
    }

    /// `stream`.
    public override var kind: String { "stream" }

    /// Where the stream goes; a change applies the next time the branch is built (remove and add the
    /// output on a running session).
    public var destination: StreamDestination {
        get { settingsState[\.destination] }
        set { settingsState[\.destination] = newValue }
    }

    /// How the stream encodes; a change applies the next time the branch is built.
    public var settings: StreamSettings {
        get { settingsState[\.stream] }
        set { settingsState[\.stream] = newValue }
    }

    /// The URL clients read while the stream is served, else nil.
    public var servedURL: String? {
        runtime.withLock { runtime in
            guard case .serve(let url)? = runtime.destination, let mount = runtime.mount else { return nil }
            var served = url
            served.port = mount.port
            return served.description
        }
    }

    /// Clients reading the served stream now (RTSP PLAY, or SRT callers of a listener).
    public var clientCount: Int { runtime.withLock { $0.clients } }

    /// True while a published stream is connected to its server.
    public var isConnected: Bool { runtime.withLock { $0.publisher?.isConnected ?? false } }

    /// Encoded video frames handed on so far to a receiver: while a client reads the served path, or
    /// while the published stream is connected to its server (0 when it never was).
    public var sentFrameCount: Int { sentFrames.value }

    /// Encoded video bytes handed on so far (what one client receives, before RTP/TS overhead).
    public var sentByteCount: Int { sentBytes.value }

    // MARK: The branch

    /// Element names of the branch, by role.
    struct Names {
        let output: String
        var sink: String { "\(output)_sink" }
        var audioSink: String { "\(output)_audio_sink" }
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settingsState.value
        try current.stream.check(output: name)
        let names = Names(output: name)
        guard let videoInput = context.videoInput else { throw .noVideoInput(output: name) }
        if let wanted = current.stream.size, let frame = videoInput.format?.device.size, !frame.covers(wanted) {
            throw .invalidStreamSettings(
                output: name, reason: "size \(wanted) is larger than the \(frame) frames of input '\(videoInput.input)'; upscaling is refused")
        }
        let encoder = try context.environment.encoders.resolve(current.stream.encoder, neededBy: description)
        var factories = [encoder.rawValue, "h264parse", "appsink"]
        var auxiliary = ["appsrc"]
        switch current.destination {
        case .serve: auxiliary.append("rtph264pay")
        case .publish(let url): auxiliary += StreamPublisher.sinkFactories(for: url)
        }
        let audio = current.stream.streamedAudio
        let audioSource = audio == nil ? nil : context.audioInputs.first
        if let audio, audioSource == nil {
            throw .invalidStreamSettings(
                output: name,
                reason: "audio-codec=\(audio.rawValue) needs an audio input in the session (device=default-audio or test-tone); use audio-codec=none")
        }
        if let audio {
            factories += [audio.encoderFactory ?? "opusenc"]
            if case .serve = current.destination { auxiliary.append(audio == .aac ? "rtpmp4gpay" : "rtpopuspay") }
        }
        do { try GStreamer.initialize() } catch { throw CaptureError(error, object: description) }
        for factory in factories + auxiliary where !GStreamer.hasElement(factory) {
            throw .elementMissing(factory: factory, neededBy: description)
        }

        let shared = try sharedEncoder(context, settings: current.stream, h264: encoder)
        let video: [ElementSpec] = [
            // Encoded frames: a second of them at most, should the stream's own thread fall behind.
            ElementSpec("queue", name: "\(name)_queue", [("max-size-buffers", "0"), ("max-size-bytes", "0"), ("max-size-time", "1000000000")]),
            ElementSpec("h264parse", name: "\(name)_parse", [("config-interval", "-1")]),
            ElementSpec("capsfilter", name: "\(name)_h264", [("caps", "video/x-h264,stream-format=byte-stream,alignment=au")]),
            Self.appSink(names.sink),
        ]
        var chains = [Chain(input: shared.name, elements: video)]
        if let audio, let audioSource, let encoder = audio.encoderFactory {
            var chain: [ElementSpec] = [
                ElementSpec(
                    "queue", name: "\(name)_audio_queue",
                    [
                        ("max-size-buffers", "0"), ("max-size-bytes", "0"),
                        ("max-size-time", "500000000"), ("leaky", "downstream"),
                    ]),
                ElementSpec("audioconvert", name: "\(name)_audio_convert"),
                ElementSpec("audioresample", name: "\(name)_audio_resample"),
                ElementSpec("capsfilter", name: "\(name)_audio_format", [("caps", "audio/x-raw,rate=48000")]),
                ElementSpec(encoder, name: "\(name)_audio_encode"),
            ]
            if audio == .aac { chain.append(ElementSpec("aacparse", name: "\(name)_audio_parse")) }
            chain.append(Self.appSink(names.audioSink))
            chains.append(Chain(input: audioSource.input, elements: chain))
        }
        var segment = BranchSegment(output: name, kind: kind, chains: chains, auxiliaryFactories: auxiliary)
        segment.reads = [shared]
        return segment
    }

    override func offeredEncoder(_ context: BranchContext) -> SharedEncoder? {
        let current = settingsState.value
        guard let h264 = try? context.environment.encoders.resolve(current.stream.encoder, neededBy: description) else { return nil }
        return try? sharedEncoder(context, settings: current.stream, h264: h264)
    }

    /// The stream's encoder, which a recording of the same picture may read too: the video head at the
    /// stream's size (with the stream's overlays), a steady frame rate, H.264 tuned for latency with a
    /// key frame every `keyFrameInterval`.
    private func sharedEncoder(_ context: BranchContext, settings: StreamSettings, h264: H264Encoder) throws(CaptureError) -> SharedEncoder {
        guard let videoInput = context.videoInput else { throw .noVideoInput(output: name) }
        let size = settings.size ?? context.outputSize
        let rate = context.frameRate
        let pixels = context.rotatedSize(size) ?? Size(width: 640, height: 480)
        let perSecond = rate?.value ?? 30
        let bitRate = settings.bitRate ?? max(200_000, Int(Double(pixels.area) * perSecond * 0.1))
        let keyInterval = max(1, Int((settings.keyFrameInterval.seconds * perSecond).rounded()))
        let base = "\(name)_h264"
        var head = context
        head.output = base
        let elements = try head.videoHead(leaky: false, maxBuffers: 8, size: size, format: h264.inputFormat, overlays: false)
        return SharedEncoder(
            owner: name, input: videoInput.input, head: elements,
            overlay: ElementSpec("overlaycomposition", name: CaptureOutput.overlayElementName(name)), rate: rate, encoder: h264,
            bitRate: bitRate, keyInterval: keyInterval)
    }

    private static func appSink(_ name: String) -> ElementSpec {
        ElementSpec(
            "appsink", name: name,
            [
                ("sync", "false"), ("async", "false"), ("enable-last-sample", "false"),
                ("max-buffers", "30"), ("drop", "true"),
            ])
    }

    /// The stream's own pipeline in gst-launch terms, for `capture compile`.
    public var streamLaunchDescription: String {
        let current = settingsState.value
        let audio = current.stream.streamedAudio
        switch current.destination {
        case .serve(let url):
            var media = "appsrc name=videosrc is-live=true format=time leaky-type=downstream ! rtph264pay name=pay0 pt=96 config-interval=0"
            if let audio {
                media +=
                    "  appsrc name=audiosrc is-live=true format=time leaky-type=downstream ! \(audio == .aac ? "rtpmp4gpay" : "rtpopuspay") name=pay1 pt=97"
            }
            return "RTSP server on \(url.hostAndPort), path \(url.path), one media shared by its clients: \(media)"
        case .publish(let url):
            return StreamPublisher.launchDescription(for: url, audio: audio)
        }
    }

    // MARK: Running

    /// Serving binds the server's port before the branch runs, so a port that is taken fails the
    /// commit (or the start) with `streamServerFailed` instead of a stream nobody can read.
    override func prepareToRun() throws(CaptureError) {
        try ensureMount()
    }

    /// Mounts the served path unless it is mounted already with the current settings.
    private func ensureMount() throws(CaptureError) {
        let current = settingsState.value
        guard case .serve(let url) = current.destination else { return }
        let audio = current.stream.streamedAudio
        let old = runtime.withLock { runtime -> RTSPMount? in
            if runtime.mount != nil && runtime.destination == current.destination && runtime.audio == audio { return nil }
            defer { runtime.mount = nil }
            return runtime.mount
        }
        if runtime.withLock({ $0.mount != nil }) { return }
        old?.remove()
        let mount = try RTSPServers.shared.mount(url, audio: audio) { [weak self] connected, address in
            self?.client(connected: connected, address: address)
        }
        runtime.withLock { runtime in
            runtime.mount = mount
            runtime.destination = current.destination
            runtime.audio = audio
            runtime.clients = 0
        }
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        let current = settingsState.value
        let audio = current.stream.streamedAudio
        var publisher: StreamPublisher?
        switch current.destination {
        case .serve:
            // A branch rebuilt on a running session was detached (its path unmounted) since prepareToRun.
            do { try ensureMount() } catch { handle.post(.runtimeError(error)) }
            if let url = servedURL { handle.post(.streamReady(output: name, url: url)) }
        case .publish(let url):
            let output = name
            publisher = StreamPublisher(url: url, output: output, audio: audio) { [weak handle] kind in handle?.post(kind) }
        }
        runtime.withLock { runtime in
            runtime.publisher = publisher
            runtime.keyFrameRequested = false
            if publisher != nil {
                runtime.destination = current.destination
                runtime.audio = audio
            }
        }
        let names = Names(output: name)
        let videoSink = handle.element(names.sink)
        // The appsink's sink pad, by address: the callback runs on that appsink's streaming thread, so
        // the pad is alive whenever it runs (a Pad held by the callback would keep the appsink alive).
        let sinkPad = videoSink?.staticPad("sink").map(UnownedPad.init)
        videoSink?.setAppSinkCallbacks(onSample: { [weak self] sample in
            guard let self else { return }
            if self.deliver(sample, audio: false), let sinkPad { self.requestKeyFrame(sinkPad) }
        })
        handle.element(names.audioSink)?.setAppSinkCallbacks(onSample: { [weak self] sample in
            _ = self?.deliver(sample, audio: true)
        })
        publisher?.start()
    }

    override func detach() {
        super.detach()
        let publisher = runtime.withLock { runtime -> StreamPublisher? in
            defer { runtime.publisher = nil }
            return runtime.publisher
        }
        publisher?.stop()
        let mount = runtime.withLock { runtime -> RTSPMount? in
            defer { runtime.mount = nil; runtime.clients = 0; runtime.destination = nil }
            return runtime.mount
        }
        mount?.remove()
    }

    /// Runs on the branch's streaming thread: hands the sample on; true when a receiver waits for a key frame.
    private func deliver(_ sample: SampleView, audio: Bool) -> Bool {
        let (mount, publisher, clients) = runtime.withLock { ($0.mount, $0.publisher, $0.clients) }
        var wantsKey = false
        if let mount { wantsKey = mount.push(sample, audio: audio) || wantsKey }
        if let publisher { wantsKey = publisher.push(sample, audio: audio) || wantsKey }
        // Counted only when someone receives it: a client of the served path, a connected server.
        if !audio, clients > 0 || publisher?.isConnected == true {
            sentFrames.withLock { $0 += 1 }
            let size = sample.buffer?.size ?? 0
            sentBytes.withLock { $0 += size }
            if sample.isKeyFrame { runtime.withLock { $0.keyFrameRequested = false } }
        }
        return wantsKey
    }

    /// Asks the encoder for a key frame, once until one comes.
    private func requestKeyFrame(_ pad: UnownedPad) {
        let first = runtime.withLock { runtime -> Bool in
            defer { runtime.keyFrameRequested = true }
            return !runtime.keyFrameRequested
        }
        if first { pad.pushKeyFrameRequest() }
    }

    /// A client of the served path came or went (on the RTSP server's thread).
    private func client(connected: Bool, address: String) {
        let url = servedURL ?? destination.url.description
        runtime.withLock { runtime in runtime.clients = max(0, runtime.clients + (connected ? 1 : -1)) }
        guard let handle = handleState.value else { return }
        handle.post(
            connected
                ? .streamClientConnected(output: name, url: url, client: address)
                : .streamClientDisconnected(output: name, url: url, client: address))
    }

    deinit {
        runtime.value.publisher?.stop()
        runtime.value.mount?.remove()
    }
}
