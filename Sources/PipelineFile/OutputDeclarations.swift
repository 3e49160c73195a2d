import Capture
import Foundation

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
    /// `rotate-pixels=` of a photo or movie output (nil: not given, false: the turn is a tag).
    public var rotatePixels: Bool?
    /// The kind and the keys of that kind.
    public var settings: OutputSettings
    /// Where the declaration is written, for diagnostics; takes no part in equality.
    @IgnoredInEquality public var location: SourceLocation?

    /// An output declaration of the kind `settings` gives.
    public init(
        name: String, input: String? = nil, rotation: Int? = nil, mirrored: Bool? = nil, rotatePixels: Bool? = nil, settings: OutputSettings,
        location: SourceLocation? = nil
    ) {
        self.rotatePixels = rotatePixels
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
        ConnectionSettings(input: input, rotation: rotation ?? 0, isMirrored: mirrored ?? false, rotatesPixels: rotatePixels ?? false)
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
    /// `overwrite=`: a photo replaces the file at a plain `location` (`CapturePhotoOutput.Defaults.overwritesExistingFile`);
    /// by default it takes the next free name.
    public var overwrite: Bool?

    /// Photo settings; every key is optional.
    public init(
        codec: PhotoCodec? = nil, quality: Int? = nil, location: String? = nil, size: Size? = nil, zeroShutterLag: Bool? = nil,
        crop: NormalizedRect? = nil, saveToLibrary: Bool? = nil, overwrite: Bool? = nil
    ) {
        self.overwrite = overwrite
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
    /// `overwrite=`: a recording replaces the file at a plain `location` (`MovieSettings.overwritesExistingFile`);
    /// by default an existing file there is `file-already-exists`.
    public var overwrite: Bool?

    /// Movie settings; every key is optional.
    public init(
        location: String? = nil, container: MovieContainer? = nil, videoCodec: MovieVideoCodec? = nil, audioCodec: MovieAudioCodec? = nil,
        bitrate: Int? = nil, maxDuration: Duration? = nil, maxFileSize: Int64? = nil, minFreeDiskSpace: Int64? = nil,
        fragmentInterval: Duration? = nil, saveToLibrary: Bool? = nil, preRoll: Duration? = nil, encoder: H264EncoderPreference? = nil,
        overwrite: Bool? = nil
    ) {
        self.overwrite = overwrite
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
    /// `delivery=`: `appearances` (default) or `every-frame` (the `codes-in-frame` event, as iOS's delegate).
    public var delivery: MetadataDelivery?
    /// `discard-late-frames=`: true (default) drops a frame that comes while the decoder is busy;
    /// false decodes every frame, holding the source back (`CaptureMetadataOutput.discardsLateFrames`).
    public var discardLateFrames: Bool?

    /// Metadata settings; every key is optional.
    public init(
        types: [BarcodeType]? = nil, rectOfInterest: NormalizedRect? = nil, backend: MetadataBackend? = nil, highlight: [String]? = nil,
        delivery: MetadataDelivery? = nil, discardLateFrames: Bool? = nil
    ) {
        self.types = types
        self.rectOfInterest = rectOfInterest
        self.backend = backend
        self.highlight = highlight
        self.delivery = delivery
        self.discardLateFrames = discardLateFrames
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
    /// `window=`: the X11 window the preview draws into (`CaptureVideoPreviewOutput.setWindowHandle`).
    public var window: UInt?
    /// `gravity=`: how the video fills its view (`videoGravity`).
    public var gravity: VideoGravity?
    /// `size=`: the view's size (`viewSize`); a window's own size is followed instead.
    public var size: Size?

    /// Preview settings; each is optional.
    public init(sink: PreviewSink? = nil, window: UInt? = nil, gravity: VideoGravity? = nil, size: Size? = nil) {
        self.sink = sink
        self.window = window
        self.gravity = gravity
        self.size = size
    }
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
