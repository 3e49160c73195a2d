import Capture
import Foundation

/// A `.pipeline` file as a Swift value: the session's settings, its declarations and its scenario.
/// Equality compares meaning, not where statements were written (locations are ignored).
///
/// Read one with `PipelineDocument.parse(_:file:options:)` or `PipelineDocument.load(path:options:)`,
/// write one back with `pipelineText`, make one from a configured `CaptureSession` with
/// `PipelineDocument(session:)`, and run one with `ScenarioRunner`.
public struct PipelineDocument: Hashable, Sendable {
    /// The `session` statement.
    public var session: SessionSettings
    /// The `input` declarations, in file order.
    public var inputs: [InputDeclaration]
    /// The `output` declarations, in file order.
    public var outputs: [OutputDeclaration]
    /// The `overlay` declarations, in file order.
    public var overlays: [OverlayDeclaration]
    /// The actions, in order. Empty for a file that only declares a session.
    public var scenario: [ScenarioStep]
    /// The file the document was read from: relative paths resolve against its directory.
    @IgnoredInEquality public var sourcePath: String?

    /// A document; every part defaults to empty.
    public init(
        session: SessionSettings = SessionSettings(), inputs: [InputDeclaration] = [], outputs: [OutputDeclaration] = [],
        overlays: [OverlayDeclaration] = [], scenario: [ScenarioStep] = [], sourcePath: String? = nil
    ) {
        self.session = session
        self.inputs = inputs
        self.outputs = outputs
        self.overlays = overlays
        self.scenario = scenario
        self.sourcePath = sourcePath
    }

    /// The `expect` statements of the scenario, in order (they are checked at the end of a run).
    public var expectations: [(Expectation, SourceLocation?)] {
        scenario.compactMap { step in
            if case .expect(let expectation) = step.action { return (expectation, step.location) }
            return nil
        }
    }

    /// True when the scenario holds nothing but `expect` statements: the session then starts at once
    /// and runs until the duration limit or a stop request, and the expectations are checked at the end.
    public var isFreeRunning: Bool {
        scenario.allSatisfy { if case .expect = $0.action { true } else { false } }
    }
}

/// The `session` statement.
public struct SessionSettings: Hashable, Sendable {
    /// `preset=`; nil when not given (Capture's default, `high`).
    public var preset: SessionPreset?
    /// `fallback-preset=`: the preset used when the inputs cannot serve `preset` (the camera manager's
    /// "photo, else high").
    public var fallbackPreset: SessionPreset?
    /// Where the `session` statement is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// The `session` statement with a preset (nil: not given).
    public init(preset: SessionPreset? = nil, fallbackPreset: SessionPreset? = nil, location: SourceLocation? = nil) {
        self.preset = preset
        self.fallbackPreset = fallbackPreset
        self.location = location
    }
}

/// An `input` declaration (or the input of an `add-input` action): a device and its options.
/// Maps onto `CaptureDeviceInput(device:name:options:)`.
public struct InputDeclaration: Hashable, Sendable {
    /// `name=`: unique among the session's inputs and outputs.
    public var name: String
    /// The `device=` grammar: `default`, `default-audio`, `test-pattern`, `test-tone`, `file:PATH`,
    /// `/dev/videoN` or a device id. Defaults to `default` (`default-audio` with `media=audio`).
    public var device: String
    /// `media=`, when given (otherwise inferred from the device).
    public var media: MediaType?
    /// `pattern=` (test-pattern only): a videotestsrc pattern nick.
    public var pattern: String?
    /// `size=` and `framerate=` (for the `input-priority` preset).
    public var size: Size?
    /// `framerate=`, reduced to lowest terms.
    public var frameRate: FrameRate?
    /// `fail-after=` (virtual devices only): fault injection after this many frames.
    public var failAfterFrames: Int?
    /// `reconnect=true`: the session survives a replug of this input's device (see `InputOptions.reconnects`).
    public var reconnect: Bool?
    /// `fallback=`: the device to use, saying so, when `device` cannot be used (missing, busy, or not
    /// allowed to be opened): a microphone the user may not open falls back to another, or to test-tone.
    public var fallback: String?
    /// Where the declaration is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// An input declaration; only `name` is required (the device defaults to `default`).
    public init(
        name: String, device: String = "default", media: MediaType? = nil, pattern: String? = nil, size: Size? = nil,
        frameRate: FrameRate? = nil, failAfterFrames: Int? = nil, reconnect: Bool? = nil, fallback: String? = nil,
        location: SourceLocation? = nil
    ) {
        self.fallback = fallback
        self.name = name
        self.device = device
        self.media = media
        self.pattern = pattern
        self.size = size
        self.frameRate = frameRate
        self.failAfterFrames = failAfterFrames
        self.reconnect = reconnect
        self.location = location
    }

    /// The options Capture takes for this input.
    public var options: InputOptions {
        InputOptions(pattern: pattern, size: size, frameRate: frameRate, failAfterFrames: failAfterFrames, reconnects: reconnect ?? false)
    }

    /// The media of the device when the declaration alone tells it (`media=`, or a virtual or default device).
    public var knownMedia: MediaType? {
        if let media { return media }
        switch device {
        case "default", "default-video", "test-pattern": return .video
        case "default-audio", "test-tone": return .audio
        default: return device.hasPrefix("/dev/video") ? .video : nil
        }
    }

    /// True for the virtual devices (`test-pattern`, `test-tone`, `file:`), false for real ones, nil
    /// for `default` (a camera when there is one, else the test pattern).
    public var isVirtualDevice: Bool? {
        switch device {
        case "test-pattern", "test-tone": return true
        case "default", "default-video", "default-audio": return nil
        default: return device.hasPrefix("file:")
        }
    }
}

/// An `output` declaration (or the output of an `add-output` action).
public struct OutputDeclaration: Hashable, Sendable {
    /// `name=`: unique among the session's inputs and outputs.
    public var name: String
    /// `input=`: the video input feeding the output (nil: the session's first video input).
    public var input: String?
    /// `rotation=` 0, 90, 180 or 270 (nil: not given, 0).
    public var rotation: Int?
    /// `mirrored=` (nil: not given, false).
    public var mirrored: Bool?
    /// The kind and the keys of that kind.
    public var settings: OutputSettings
    /// Where the declaration is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// An output declaration of the kind `settings` gives.
    public init(
        name: String, input: String? = nil, rotation: Int? = nil, mirrored: Bool? = nil, settings: OutputSettings,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.input = input
        self.rotation = rotation
        self.mirrored = mirrored
        self.settings = settings
        self.location = location
    }

    /// `kind=`.
    public var kind: OutputKind { settings.kind }

    /// The connection Capture gives the output.
    public var connection: ConnectionSettings {
        ConnectionSettings(input: input, rotation: rotation ?? 0, isMirrored: mirrored ?? false)
    }
}

/// The kind of an output with the keys of that kind.
public enum OutputSettings: Hashable, Sendable {
    /// `kind=photo`: a photo output and its keys.
    case photo(PhotoOutputSettings)
    /// `kind=movie`: a movie file output and its keys.
    case movie(MovieOutputSettings)
    /// `kind=metadata`: a machine-readable code (barcode) output and its keys.
    case metadata(MetadataOutputSettings)
    /// `kind=frames`: an output that hands out video frames, and its keys.
    case frames(FramesOutputSettings)
    /// `kind=preview`: a preview output and its keys.
    case preview(PreviewOutputSettings)
    /// `kind=stream`: an RTSP or SRT stream output and its keys.
    case stream(StreamOutputSettings)

    /// The `kind=` these settings are for.
    public var kind: OutputKind {
        switch self {
        case .photo: .photo
        case .movie: .movie
        case .metadata: .metadata
        case .frames: .frames
        case .preview: .preview
        case .stream: .stream
        }
    }
}

/// Keys of a `kind=photo` output. Nil means "not given" (the default applies).
public struct PhotoOutputSettings: Hashable, Sendable {
    /// `codec=` (default jpeg).
    public var codec: PhotoCodec?
    /// 1-100.
    public var quality: Int?
    /// `location=`: where photos are saved (a `%d` pattern numbers them).
    public var location: String?
    /// Crop/scale of the still.
    public var size: Size?
    /// `zero-shutter-lag=`.
    public var zeroShutterLag: Bool?
    /// `crop=`: the picker's editing step, a normalized rectangle of the frame each photo keeps.
    public var crop: NormalizedRect?
    /// `save-to-library=`: each photo is also saved to the user's library.
    public var saveToLibrary: Bool?

    /// Photo settings; every key is optional.
    public init(
        codec: PhotoCodec? = nil, quality: Int? = nil, location: String? = nil, size: Size? = nil, zeroShutterLag: Bool? = nil,
        crop: NormalizedRect? = nil, saveToLibrary: Bool? = nil
    ) {
        self.crop = crop
        self.saveToLibrary = saveToLibrary
        self.codec = codec
        self.quality = quality
        self.location = location
        self.size = size
        self.zeroShutterLag = zeroShutterLag
    }
}

/// Keys of a `kind=movie` output. Nil means "not given" (the default applies).
public struct MovieOutputSettings: Hashable, Sendable {
    /// `location=`: the movie file (a `%d` pattern takes the next free number).
    public var location: String?
    /// `container=` (default: the location's extension, else mp4).
    public var container: MovieContainer?
    /// `video-codec=` (default: the container's).
    public var videoCodec: MovieVideoCodec?
    /// `audio-codec=` (default: the container's when an audio input exists).
    public var audioCodec: MovieAudioCodec?
    /// `bitrate=`, bits per second.
    public var bitrate: Int?
    /// `max-duration=`.
    public var maxDuration: Duration?
    /// `max-file-size=`, bytes.
    public var maxFileSize: Int64?
    /// `min-free-disk-space=`, bytes.
    public var minFreeDiskSpace: Int64?
    /// `fragment-interval=` (default 1 s; zero: one unfragmented movie).
    public var fragmentInterval: Duration?
    /// `save-to-library=`: a complete, compatible recording is also saved to the user's library.
    public var saveToLibrary: Bool?
    /// `pre-roll=`: a recording begins this much before it is started (`MovieSettings.preRoll`).
    public var preRoll: Duration?
    /// `encoder=` `auto` (default) or an H.264 encoder's factory name (`MovieSettings.encoder`).
    public var encoder: H264EncoderPreference?

    /// Movie settings; every key is optional.
    public init(
        location: String? = nil, container: MovieContainer? = nil, videoCodec: MovieVideoCodec? = nil, audioCodec: MovieAudioCodec? = nil,
        bitrate: Int? = nil, maxDuration: Duration? = nil, maxFileSize: Int64? = nil, minFreeDiskSpace: Int64? = nil,
        fragmentInterval: Duration? = nil, saveToLibrary: Bool? = nil, preRoll: Duration? = nil, encoder: H264EncoderPreference? = nil
    ) {
        self.encoder = encoder
        self.saveToLibrary = saveToLibrary
        self.preRoll = preRoll
        self.location = location
        self.container = container
        self.videoCodec = videoCodec
        self.audioCodec = audioCodec
        self.bitrate = bitrate
        self.maxDuration = maxDuration
        self.maxFileSize = maxFileSize
        self.minFreeDiskSpace = minFreeDiskSpace
        self.fragmentInterval = fragmentInterval
    }
}

/// Keys of a `kind=metadata` output. Nil means "not given" (the default applies).
public struct MetadataOutputSettings: Hashable, Sendable {
    /// `types=` (nil: every available type).
    public var types: [BarcodeType]?
    /// `rect-of-interest=`: where codes are looked for (nil: the whole frame).
    public var rectOfInterest: NormalizedRect?
    /// `backend=` (default auto).
    public var backend: MetadataBackend?
    /// `highlight=`: outputs on which the corners of the codes in view are drawn.
    public var highlight: [String]?

    /// Metadata settings; every key is optional.
    public init(types: [BarcodeType]? = nil, rectOfInterest: NormalizedRect? = nil, backend: MetadataBackend? = nil, highlight: [String]? = nil) {
        self.types = types
        self.rectOfInterest = rectOfInterest
        self.backend = backend
        self.highlight = highlight
    }
}

/// Keys of a `kind=frames` output: `CaptureVideoDataOutput`, or `CaptureImageSequenceOutput` when
/// `location` is given.
public struct FramesOutputSettings: Hashable, Sendable {
    /// A numbered file pattern (`frames/%05d.png`).
    public var location: String?
    /// At most this many frames per second.
    public var maxRate: Double?
    /// The frame size (extension; nil: the preset's size).
    public var size: Size?

    /// Frames settings; every key is optional.
    public init(location: String? = nil, maxRate: Double? = nil, size: Size? = nil) {
        self.location = location
        self.maxRate = maxRate
        self.size = size
    }
}

/// Keys of a `kind=preview` output: `CaptureVideoPreviewOutput`.
public struct PreviewOutputSettings: Hashable, Sendable {
    /// `sink=` (default auto).
    public var sink: PreviewSink?

    /// Preview settings; `sink` is optional.
    public init(sink: PreviewSink? = nil) { self.sink = sink }
}

/// Keys of a `kind=stream` output: `CaptureStreamOutput`. Exactly one of `serve` and `publish`.
public struct StreamOutputSettings: Hashable, Sendable {
    /// `serve=`: the URL clients read (`rtsp://ADDRESS:PORT/PATH`), served by the process.
    public var serve: String?
    /// `publish=`: a server's ingest URL (`rtsp://HOST:PORT/PATH`, `srt://HOST:PORT`).
    public var publish: String?
    /// `bitrate=`, bits per second.
    public var bitrate: Int?
    /// `audio-codec=` `aac`, `opus` or `none` (default: none).
    public var audioCodec: MovieAudioCodec?
    /// `size=` (default: the preset's size).
    public var size: Size?
    /// `encoder=` `auto` (default) or an H.264 encoder's factory name (`StreamSettings.encoder`).
    public var encoder: H264EncoderPreference?

    /// Stream settings; give `serve` or `publish`.
    public init(
        serve: String? = nil, publish: String? = nil, bitrate: Int? = nil, audioCodec: MovieAudioCodec? = nil, size: Size? = nil,
        encoder: H264EncoderPreference? = nil
    ) {
        self.encoder = encoder
        self.serve = serve
        self.publish = publish
        self.bitrate = bitrate
        self.audioCodec = audioCodec
        self.size = size
    }
}

/// An `overlay` declaration (or `add-overlay` / `set-overlay` action): what is drawn, on which
/// outputs, under which name. Maps onto `CaptureOutput.addOverlay(_:)` / `updateOverlay(named:_:)`.
public struct OverlayDeclaration: Hashable, Sendable {
    /// `name=` (declarations without one are named `overlay1`, `overlay2` ... in file order).
    public var name: String
    /// `output=`: a name or a list of names; `preview` also means the session's preview outputs. Empty
    /// in `set-overlay` / `remove-overlay`: every output that has an overlay of that name.
    public var outputs: [String]
    /// What the overlay draws and how (for `set-overlay`, only what changes).
    public var fields: OverlayFields
    /// Where the declaration or action is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// An overlay on outputs.
    public init(name: String, outputs: [String], fields: OverlayFields, location: SourceLocation? = nil) {
        self.name = name
        self.outputs = outputs
        self.fields = fields
        self.location = location
    }
}

/// The keys of an overlay: one thing to draw (`text`, `clock`, `image`, `rectangle`, `line`,
/// `polygon`) and how it looks and where it goes. Every key is optional: `set-overlay` changes only
/// the keys it gives. Texts may hold `{flash-mode}`, `{camera}` and `{recording}`, which the runner
/// replaces with the session's state and keeps up to date.
public struct OverlayFields: Hashable, Sendable {
    /// `text=`: a text to draw (may hold `{flash-mode}`, `{camera}` and `{recording}`).
    public var text: String?
    /// `clock=`: a clock to draw, in this style (`clock=true` is `time`).
    public var clock: CaptureOverlay.ClockStyle?
    /// `image=`: the path of a PNG file to draw.
    public var image: String?
    /// `width=`: an image's width as a fraction of the frame's width.
    public var width: Double?
    /// `rectangle=< x, y, width, height >`: a rectangle to draw, in normalized coordinates.
    public var rectangle: NormalizedRect?
    /// `line=< x0, y0, x1, y1 >`.
    public var line: [NormalizedPoint]?
    /// `polygon=< x0, y0, x1, y1, x2, y2 ... >`.
    public var polygon: [NormalizedPoint]?
    /// `font=`: a text's font family ("Sans", "Serif", "Monospace" ...).
    public var font: String?
    /// `size=`: a text's line height as a fraction of the frame's height.
    public var size: Double?
    /// `color=`: a text's colour, or a shape's stroke (`none`: shapes are only filled).
    public var color: OverlayColor?
    /// `background=`: the box behind a text (`none`: no box).
    public var background: OverlayColor?
    /// `line-width=`: a shape's stroke width as a fraction of the frame's height.
    public var lineWidth: Double?
    /// `fill=`: a shape's fill colour.
    public var fill: OverlayColor?
    /// `position=`: where the overlay goes, a named position (`top-left` ...) or a point `< x, y >`.
    public var position: CaptureOverlay.Position?
    /// `alpha=`: the overlay's opacity.
    public var alpha: Double?

    /// Overlay keys; each one not given stays nil.
    /// - Parameters:
    ///   - text: `text=`.
    ///   - clock: `clock=`.
    ///   - image: `image=`.
    ///   - width: `width=`.
    ///   - rectangle: `rectangle=`.
    ///   - line: `line=`.
    ///   - polygon: `polygon=`.
    ///   - font: `font=`.
    ///   - size: `size=`.
    ///   - color: `color=`.
    ///   - background: `background=`.
    ///   - lineWidth: `line-width=`.
    ///   - fill: `fill=`.
    ///   - position: `position=`.
    ///   - alpha: `alpha=`.
    public init(
        text: String? = nil, clock: CaptureOverlay.ClockStyle? = nil, image: String? = nil, width: Double? = nil,
        rectangle: NormalizedRect? = nil, line: [NormalizedPoint]? = nil, polygon: [NormalizedPoint]? = nil,
        font: String? = nil, size: Double? = nil, color: OverlayColor? = nil, background: OverlayColor? = nil,
        lineWidth: Double? = nil, fill: OverlayColor? = nil, position: CaptureOverlay.Position? = nil, alpha: Double? = nil
    ) {
        self.text = text
        self.clock = clock
        self.image = image
        self.width = width
        self.rectangle = rectangle
        self.line = line
        self.polygon = polygon
        self.font = font
        self.size = size
        self.color = color
        self.background = background
        self.lineWidth = lineWidth
        self.fill = fill
        self.position = position
        self.alpha = alpha
    }

    /// The content keys given (at most one is allowed).
    public var contentKeys: [String] {
        [
            ("text", text != nil), ("clock", clock != nil), ("image", image != nil), ("rectangle", rectangle != nil),
            ("line", line != nil), ("polygon", polygon != nil),
        ].filter(\.1).map(\.0)
    }

    /// The overlay these keys declare (nil when they give nothing to draw).
    public func overlay(named name: String, resolvingPath resolve: (String) -> String = { $0 }) -> CaptureOverlay? {
        guard !contentKeys.isEmpty else { return nil }
        return applied(to: CaptureOverlay(name: name, content: .text("")), resolvingPath: resolve)
    }

    /// `overlay` with these keys changed; the others keep their values.
    public func applied(to overlay: CaptureOverlay, resolvingPath resolve: (String) -> String = { $0 }) -> CaptureOverlay {
        var result = overlay
        var textStyle = CaptureOverlay.TextStyle(), shapeStyle = CaptureOverlay.ShapeStyle()
        var imageWidth: Double?
        switch overlay.content {
        case .text(_, let style), .clock(_, let style): textStyle = style
        case .shapes(_, let style): shapeStyle = style
        case .image(_, let width): imageWidth = width
        }
        if let font { textStyle.font = font }
        if let size { textStyle.size = size }
        if let color { textStyle.color = color; shapeStyle.stroke = color.alpha == 0 ? nil : color }
        if let background { textStyle.background = background.alpha == 0 ? nil : background }
        if let lineWidth { shapeStyle.lineWidth = lineWidth }
        if let fill { shapeStyle.fill = fill.alpha == 0 ? nil : fill }
        if let width { imageWidth = width }
        if let text {
            result.content = .text(text, style: textStyle)
        } else if let clock {
            result.content = .clock(clock, style: textStyle)
        } else if let image {
            result.content = .image(path: resolve(image), width: imageWidth)
        } else if let shapes = shapes {
            result.content = .shapes(shapes, style: shapeStyle)
        } else {
            switch overlay.content {
            case .text(let text, _): result.content = .text(text, style: textStyle)
            case .clock(let clock, _): result.content = .clock(clock, style: textStyle)
            case .image(let path, _): result.content = .image(path: path, width: imageWidth)
            case .shapes(let shapes, _): result.content = .shapes(shapes, style: shapeStyle)
            }
        }
        if let position { result.position = position }
        if let alpha { result.opacity = alpha }
        return result
    }

    private var shapes: [CaptureOverlay.Shape]? {
        if let rectangle { return [.rectangle(rectangle)] }
        if let line, line.count == 2 { return [.line(from: line[0], to: line[1])] }
        if let polygon { return [.polygon(polygon)] }
        return nil
    }
}

/// One statement of the scenario: an action, whether it is expected to fail, and where it was written.
public struct ScenarioStep: Hashable, Sendable {
    /// What the step does.
    public var action: Action
    /// `expect-error=`: the action must fail (with that error).
    public var expectedError: ExpectedError?
    /// Where the statement is (for steps of a `repeat`: where the repeated statement is written).
    @IgnoredInEquality public var location: SourceLocation?

    /// A step; it is expected to succeed unless `expectedError` is given.
    public init(_ action: Action, expectedError: ExpectedError? = nil, location: SourceLocation? = nil) {
        self.action = action
        self.expectedError = expectedError
        self.location = location
    }
}

/// `expect-error=true` (any error) or `expect-error=ERROR-NAME`.
public enum ExpectedError: Hashable, Sendable, CustomStringConvertible {
    /// `expect-error=true`: any error satisfies the expectation.
    case any
    /// `expect-error=ERROR-NAME`: only an error of that name does.
    case named(String)

    /// True when a failure with that error name satisfies the expectation.
    public func accepts(_ errorName: String) -> Bool {
        switch self {
        case .any: true
        case .named(let name): name == errorName
        }
    }

    /// The value as `expect-error=` writes it: `true` or the error name.
    public var description: String {
        switch self {
        case .any: "true"
        case .named(let name): name
        }
    }
}

/// An action of the scenario. Each case maps onto the Capture API (see `ScenarioRunner`).
public indirect enum Action: Hashable, Sendable {
    /// `start`: `startRunning()`.
    case start
    /// `stop`: `stopRunning()` (recordings are finalized first).
    case stop
    /// `wait, duration=` or `wait, event=`.
    case wait(WaitCondition)
    /// `capture-photo`.
    case capturePhoto(PhotoCaptureRequest)
    /// `start-recording, output=` (optional `location=`).
    case startRecording(output: String, location: String?)
    /// `stop-recording`, `pause-recording`, `resume-recording`, with `output=`.
    case stopRecording(output: String)
    /// `pause-recording, output=`: pauses the movie output's recording.
    case pauseRecording(output: String)
    /// `resume-recording, output=`: resumes the movie output's paused recording.
    case resumeRecording(output: String)
    /// `begin-configuration` ... `commit-configuration`: `beginConfiguration()`, the block's
    /// statements, `commitConfiguration()`.
    case configuration(ConfigurationBlock)
    /// `add-input`, `add-output`: `addInput` / `addOutput` of a new input or output.
    case addInput(InputDeclaration)
    /// `add-output`: `addOutput` of a new output.
    case addOutput(OutputDeclaration)
    /// `remove-input, name=`, `remove-output, name=`.
    case removeInput(name: String)
    /// `remove-output, name=`: removes the output of that name.
    case removeOutput(name: String)
    /// `set-preset, preset=`: `setSessionPreset`.
    case setPreset(SessionPreset)
    /// `configure-device, input=, ...`.
    case configureDevice(DeviceConfiguration)
    /// `add-overlay`: `addOverlay` on each of its outputs.
    case addOverlay(OverlayDeclaration)
    /// `set-overlay, name=, ...`: `updateOverlay(named:)` with the keys given.
    case setOverlay(OverlayDeclaration)
    /// `remove-overlay, name=` (optional `output=`): `removeOverlay(named:)`.
    case removeOverlay(name: String, outputs: [String])
    /// `toggle-flash` (optional `output=`): the photo output's next flash mode, as a camera app's
    /// flash button cycles it (auto, on, off; `on` only where the camera has a flash).
    case toggleFlash(output: String?)
    /// `switch-camera` (optional `position=front|back`): `CaptureSession.switchCamera(to:)`.
    case switchCamera(position: DevicePosition?)
    /// `trim-video`: `VideoEditor.trim` of a file or of a movie output's last recording.
    case trimVideo(TrimRequest)
    /// `generate-thumbnail`: `AssetImageGenerator.saveImage` of a file or of a movie output's last recording.
    case generateThumbnail(ThumbnailRequest)
    /// `expect`: checked at the end of the run.
    case expect(Expectation)
    /// `repeat, count=, actions={ ... }`.
    case `repeat`(count: Int, steps: [ScenarioStep])

    /// The statement that writes the action (for a configuration block, its first statement).
    public var statementName: String {
        switch self {
        case .start: "start"
        case .stop: "stop"
        case .wait: "wait"
        case .capturePhoto: "capture-photo"
        case .startRecording: "start-recording"
        case .stopRecording: "stop-recording"
        case .pauseRecording: "pause-recording"
        case .resumeRecording: "resume-recording"
        case .configuration: "begin-configuration"
        case .addInput: "add-input"
        case .addOutput: "add-output"
        case .removeInput: "remove-input"
        case .removeOutput: "remove-output"
        case .setPreset: "set-preset"
        case .configureDevice: "configure-device"
        case .addOverlay: "add-overlay"
        case .setOverlay: "set-overlay"
        case .removeOverlay: "remove-overlay"
        case .toggleFlash: "toggle-flash"
        case .switchCamera: "switch-camera"
        case .trimVideo: "trim-video"
        case .generateThumbnail: "generate-thumbnail"
        case .expect: "expect"
        case .repeat: "repeat"
        }
    }
}

/// A configuration block: its statements are applied atomically at `commit-configuration`.
public struct ConfigurationBlock: Hashable, Sendable {
    /// The statements between `begin-configuration` and `commit-configuration`.
    public var steps: [ScenarioStep]
    /// `expect-error=` written on `commit-configuration`.
    public var commitExpectedError: ExpectedError?
    /// Where `commit-configuration` is.
    @IgnoredInEquality public var commitLocation: SourceLocation?

    /// A block of statements.
    public init(steps: [ScenarioStep], commitExpectedError: ExpectedError? = nil, commitLocation: SourceLocation? = nil) {
        self.steps = steps
        self.commitExpectedError = commitExpectedError
        self.commitLocation = commitLocation
    }
}

/// What a `wait` waits for.
public enum WaitCondition: Hashable, Sendable {
    /// `wait, duration=`.
    case duration(Duration)
    /// `wait, event=` (optional `output=`, `type=`, `value=`, `count=`, `timeout=`). The wait ends when
    /// `count` matching events (default 1) have been seen since the run started, counting those seen
    /// before the wait began; it fails with `wait-timed-out` after `timeout` (default 10 s).
    case event(EventMatcher, count: Int?, timeout: Duration?)
}

/// Which events a `wait` or `expect` counts: the event's name, and optionally its `output`, `type`
/// and `value` fields.
public struct EventMatcher: Hashable, Sendable, CustomStringConvertible {
    /// `event=`: the event's name.
    public var event: String
    /// `output=`: the event's `output` field.
    public var output: String?
    /// `type=`: the event's `type` field (a barcode symbology for `code-detected`).
    public var type: String?
    /// `value=`: the event's `value` field.
    public var value: String?
    /// `swapped=`: the `swapped` field of `configuration-committed` ("back -> front": an input replaced
    /// by another in one block, its outputs going on).
    public var swapped: String?

    /// A matcher; fields left nil match any value.
    public init(event: String, output: String? = nil, type: String? = nil, value: String? = nil, swapped: String? = nil) {
        self.event = event
        self.output = output
        self.type = type
        self.value = value
        self.swapped = swapped
    }

    /// True when an event of that name and those fields matches.
    public func matches(name: String, fields: [(String, EventValue)]) -> Bool {
        guard name == event else { return false }
        func field(_ key: String) -> String? {
            guard let value = fields.first(where: { $0.0 == key })?.1 else { return nil }
            if case .string(let text) = value { return text }
            return value.description
        }
        if let output, field("output") != output { return false }
        if let type, field("type") != type { return false }
        if let value, field("value") != value { return false }
        if let swapped, field("swapped") != swapped { return false }
        return true
    }

    /// "'photo-saved' (output=photo)".
    public var description: String {
        var filters: [String] = []
        if let output { filters.append("output=\(output)") }
        if let type { filters.append("type=\(type)") }
        if let value { filters.append("value=\(value)") }
        if let swapped { filters.append("swapped=\(swapped)") }
        return "'\(event)'" + (filters.isEmpty ? "" : " (" + filters.joined(separator: ", ") + ")")
    }
}

/// An `expect` statement: how many matching events the run must have seen when it ends.
public struct Expectation: Hashable, Sendable, CustomStringConvertible {
    /// How many matching events are expected.
    public enum Quantity: Hashable, Sendable {
        /// `count=N`.
        case exactly(Int)
        /// `at-least=N`.
        case atLeast(Int)
    }
    /// Which events count.
    public var matcher: EventMatcher
    /// How many there must be.
    public var quantity: Quantity

    /// An expectation of `quantity` events matching `matcher`.
    public init(_ matcher: EventMatcher, _ quantity: Quantity) {
        self.matcher = matcher
        self.quantity = quantity
    }

    /// True when a run that saw `count` matching events meets the expectation.
    public func isSatisfied(bySeeing count: Int) -> Bool {
        switch quantity {
        case .exactly(let expected): count == expected
        case .atLeast(let minimum): count >= minimum
        }
    }

    /// "exactly 1 'photo-saved' event".
    public var description: String {
        switch quantity {
        case .exactly(let count): "exactly \(count) \(matcher) event\(count == 1 ? "" : "s")"
        case .atLeast(let count): "at least \(count) \(matcher) event\(count == 1 ? "" : "s")"
        }
    }
}

/// `capture-photo`.
public struct PhotoCaptureRequest: Hashable, Sendable {
    /// `output=`: the photo output.
    public var output: String
    /// `location=`: where to save (default: the output's location).
    public var location: String?
    /// How many photos (default 1).
    public var count: Int?
    /// The time between photos when `count` > 1.
    public var interval: Duration?
    /// `flash-mode=`.
    public var flashMode: FlashMode?
    /// `comment=`, `description=`, `latitude=`, `longitude=`, `altitude=` (an extension): tags written
    /// into each photo of the request.
    public var tags: PhotoTags

    /// A request; only the output is required.
    public init(
        output: String, location: String? = nil, count: Int? = nil, interval: Duration? = nil, flashMode: FlashMode? = nil,
        tags: PhotoTags = PhotoTags()
    ) {
        self.output = output
        self.location = location
        self.count = count
        self.interval = interval
        self.flashMode = flashMode
        self.tags = tags
    }
}

/// `configure-device`: the device settings of an input (only those given change).
public struct DeviceConfiguration: Hashable, Sendable {
    /// `input=`: the camera input.
    public var input: String
    /// `focus-mode=`.
    public var focusMode: FocusMode?
    /// `focus-point=`.
    public var focusPoint: NormalizedPoint?
    /// `exposure-mode=`.
    public var exposureMode: ExposureMode?
    /// `exposure-point=`.
    public var exposurePoint: NormalizedPoint?
    /// EV, -8 to 8.
    public var exposureBias: Double?
    /// `white-balance-mode=`.
    public var whiteBalanceMode: WhiteBalanceMode?
    /// `torch-mode=`.
    public var torchMode: TorchMode?
    /// Above 0, up to 1.
    public var torchLevel: Double?
    /// `flash-mode=`.
    public var flashMode: FlashMode?
    /// 1 or more.
    public var zoom: Double?
    /// `low-light-boost=`.
    public var lowLightBoost: Bool?
    /// `lens-position=` (extension): 0 (nearest) to 1 (furthest); locks the focus there.
    public var lensPosition: Double?
    /// `exposure-duration=` (extension): a custom exposure's duration.
    public var exposureDuration: Duration?
    /// `gain=` (extension): a custom exposure's gain, in the device's gain units.
    public var gain: Int?
    /// `white-balance-temperature=` (extension): locks the white balance at this many kelvin.
    public var whiteBalanceTemperature: Int?
    /// `controls=` (extension): any control by key, in order (`brightness=200`).
    public var controls: [ControlAssignment]

    /// Settings for an input; only those given change.
    public init(
        input: String, focusMode: FocusMode? = nil, focusPoint: NormalizedPoint? = nil, exposureMode: ExposureMode? = nil,
        exposurePoint: NormalizedPoint? = nil, exposureBias: Double? = nil, whiteBalanceMode: WhiteBalanceMode? = nil,
        torchMode: TorchMode? = nil, torchLevel: Double? = nil, flashMode: FlashMode? = nil, zoom: Double? = nil,
        lowLightBoost: Bool? = nil, lensPosition: Double? = nil, exposureDuration: Duration? = nil, gain: Int? = nil,
        whiteBalanceTemperature: Int? = nil, controls: [ControlAssignment] = []
    ) {
        self.input = input
        self.focusMode = focusMode
        self.focusPoint = focusPoint
        self.exposureMode = exposureMode
        self.exposurePoint = exposurePoint
        self.exposureBias = exposureBias
        self.whiteBalanceMode = whiteBalanceMode
        self.torchMode = torchMode
        self.torchLevel = torchLevel
        self.flashMode = flashMode
        self.zoom = zoom
        self.lowLightBoost = lowLightBoost
        self.lensPosition = lensPosition
        self.exposureDuration = exposureDuration
        self.gain = gain
        self.whiteBalanceTemperature = whiteBalanceTemperature
        self.controls = controls
    }
}

/// One item of `configure-device, controls=`: a control's key and its value as written (a number,
/// `true`/`false`, or a menu item's name).
public struct ControlAssignment: Hashable, Sendable, CustomStringConvertible {
    /// The control's key, as `capture controls` lists it (lowercase letters, digits and `_`).
    public var key: String
    /// The value as written: a number, `true`/`false`, or a menu item's name.
    public var value: String

    /// An assignment of `value` to the control `key`.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// `KEY=VALUE`, as `controls=` and `capture controls` write it; nil when it is not one.
    public init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        let key = String(text[..<equals]).trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty, !value.isEmpty, key.allSatisfy({ ($0.isLetter && $0.isLowercase) || $0.isNumber || $0 == "_" }) else { return nil }
        self.init(key: key, value: value)
    }

    /// `KEY=VALUE`, as `controls=` writes it.
    public var description: String { "\(key)=\(value)" }
}

/// The video a `trim-video` or `generate-thumbnail` statement reads.
public enum MediaSource: Hashable, Sendable {
    /// `input=FILE` (a relative path is taken from the output directory).
    case file(String)
    /// `recording=OUTPUT`: the last recording the movie output finished ("No video recorded yet",
    /// `no-recording-yet`, when there is none).
    case recording(output: String)
}

/// `trim-video, input=FILE|recording=OUTPUT, from=, to=, location=` (optional `exact=`, `save-to-library=`).
public struct TrimRequest: Hashable, Sendable {
    /// What is trimmed.
    public var source: MediaSource
    /// The range, in seconds.
    public var from: Double
    /// The end of the range, in seconds (after `from`).
    public var to: Double
    /// Where the trimmed copy goes (a taken name moves on to a free one; the extension picks the container).
    public var location: String
    /// `exact=true`: frame-accurate (`VideoEditor.TrimMode.exact`); otherwise from the keyframe at or before `from`.
    public var exact: Bool?
    /// `save-to-library=true`: the copy is also saved to the saved-photos album (`MediaLibrary.user()`).
    public var saveToLibrary: Bool?

    /// A trim request.
    public init(source: MediaSource, from: Double, to: Double, location: String, exact: Bool? = nil, saveToLibrary: Bool? = nil) {
        (self.source, self.from, self.to, self.location, self.exact, self.saveToLibrary) = (source, from, to, location, exact, saveToLibrary)
    }
}

/// When in the video a `generate-thumbnail` image is taken (`at=`).
public enum ThumbnailTime: Hashable, Sendable {
    /// `at=2.5` or `at="500ms"`: seconds from the start.
    case seconds(Double)
    /// `at="50%"`: a share of the duration, 0...100.
    case percent(Double)
}

/// `generate-thumbnail, input=FILE|recording=OUTPUT, at=, location=` (optional `size=`).
public struct ThumbnailRequest: Hashable, Sendable {
    /// What the image is taken from.
    public var source: MediaSource
    /// When (the exact frame at that time).
    public var at: ThumbnailTime
    /// Where the image goes (.jpg, .jpeg or .png).
    public var location: String
    /// The image fits inside this size; nil: the video's own size.
    public var size: Size?

    /// A thumbnail request.
    public init(source: MediaSource, at: ThumbnailTime, location: String, size: Size? = nil) {
        (self.source, self.at, self.location, self.size) = (source, at, location, size)
    }
}
