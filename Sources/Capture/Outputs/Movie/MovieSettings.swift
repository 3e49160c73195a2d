import Foundation
import GStreamer

/// The file format of a movie.
public enum MovieContainer: String, Sendable, CaseIterable, Hashable {
    /// MPEG-4 (`mp4mux`): H.264 or VP9 video, AAC or Opus audio. Written in fragments.
    case mp4
    /// Matroska (`matroskamux`): any codec of this framework.
    case mkv
    /// WebM (`webmmux`): VP8 or VP9 video, Opus audio.
    case webm
    /// QuickTime (`qtmux`): H.264, VP8, VP9 or Motion JPEG video, AAC or Opus audio. Written in fragments.
    case mov

    /// The container a file name's extension asks for (`.mp4`/`.m4v`, `.mkv`, `.webm`, `.mov`), or nil.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "mp4", "m4v": self = .mp4
        case "mkv": self = .mkv
        case "webm": self = .webm
        case "mov", "qt": self = .mov
        default: return nil
        }
    }

    /// The usual file name extension.
    public var fileExtension: String { rawValue }

    /// The video codecs the container can hold.
    public var videoCodecs: [MovieVideoCodec] {
        switch self {
        case .mp4: [.h264, .vp9]
        case .mkv, .mov: [.h264, .vp8, .vp9, .mjpeg]
        case .webm: [.vp8, .vp9]
        }
    }

    /// The audio codecs the container can hold.
    public var audioCodecs: [MovieAudioCodec] {
        switch self {
        case .mp4, .mkv, .mov: [.aac, .opus]
        case .webm: [.opus]
        }
    }

    /// The video codec used when none is asked for: H.264, or VP8 for WebM.
    public var defaultVideoCodec: MovieVideoCodec { self == .webm ? .vp8 : .h264 }

    /// The audio codec used when none is asked for and the session has an audio input: AAC, or Opus for WebM.
    public var defaultAudioCodec: MovieAudioCodec { self == .webm ? .opus : .aac }

    /// The GStreamer muxer element.
    var muxerFactory: String {
        switch self {
        case .mp4: "mp4mux"
        case .mkv: "matroskamux"
        case .webm: "webmmux"
        case .mov: "qtmux"
        }
    }
}

/// The video codec of a movie.
public enum MovieVideoCodec: String, Sendable, CaseIterable, Hashable {
    /// H.264 (`x264enc`, tuned for live encoding).
    case h264
    /// VP8 (`vp8enc`, realtime deadline).
    case vp8
    /// VP9 (`vp9enc`, realtime deadline).
    case vp9
    /// Motion JPEG (`jpegenc`): every frame a JPEG; quality-based, no bit rate.
    case mjpeg

    var encoderFactory: String {
        switch self {
        case .h264: "x264enc"
        case .vp8: "vp8enc"
        case .vp9: "vp9enc"
        case .mjpeg: "jpegenc"
        }
    }
}

/// The audio codec of a movie.
public enum MovieAudioCodec: String, Sendable, CaseIterable, Hashable {
    /// AAC-LC (`voaacenc`, else `avenc_aac`).
    case aac
    /// Opus (`opusenc`).
    case opus
    /// No audio track, even when the session has an audio input (`audio-codec=none`). Spell it
    /// `MovieAudioCodec.none` where an optional is expected: a bare `.none` there means nil (the default).
    case none

    /// The encoder element installed on this machine, nil for `.none`; `aac` prefers `voaacenc` and
    /// falls back to FFmpeg's `avenc_aac`.
    var encoderFactory: String? {
        switch self {
        case .aac: GStreamer.hasElement("voaacenc") || !GStreamer.hasElement("avenc_aac") ? "voaacenc" : "avenc_aac"
        case .opus: "opusenc"
        case .none: nil
        }
    }
}

/// Everything a `CaptureMovieFileOutput` records with: the `.pipeline` keys of `output, kind=movie`
/// map one to one onto these fields. A recording takes a copy when it starts: changing the settings
/// while recording applies to the next recording.
public struct MovieSettings: Hashable, Sendable {
    /// Where `startRecording()` writes when it is given no location (`location`): a plain path or a
    /// `%d`-style pattern (`clip_%03d.mp4`) that takes the next free number.
    public var location: String?
    /// The file format; nil: from the location's extension, else MP4.
    public var container: MovieContainer?
    /// nil: the container's default (H.264; VP8 for WebM).
    public var videoCodec: MovieVideoCodec?
    /// nil: the container's default (AAC; Opus for WebM) when the session has an audio input, else no
    /// audio. `MovieAudioCodec.none`: never audio. An explicit codec without an audio input is an error.
    public var audioCodec: MovieAudioCodec?
    /// Video bit rate in bits per second (`bitrate`); nil: about 0.1 bit per pixel per frame.
    public var bitRate: Int?
    /// Audio bit rate in bits per second; nil: the encoder's default (AAC 128 kbit/s, Opus 64 kbit/s).
    public var audioBitRate: Int?
    /// The frame size of the movie; nil: the session preset's size when the recording starts.
    public var size: Size?
    /// The frame rate of the movie (frames are dropped or repeated to hold it); nil: the input's rate.
    public var frameRate: FrameRate?
    /// The audio input to record; nil: the session's first audio input.
    public var audioInput: String?
    /// The recording stops (finishing its file, successfully, with `maximumDurationReached`) when it
    /// holds this much media (`max-duration`).
    public var maxRecordedDuration: Duration?
    /// The recording stops (with `maximumFileSizeReached`) before the file grows past this many bytes
    /// (`max-file-size`).
    public var maxRecordedFileSize: Int64?
    /// The recording stops (with `minimumFreeDiskSpaceReached`) when the free space of the file's file
    /// system falls below this many bytes (`min-free-disk-space`); a recording does not start below it.
    public var minFreeDiskSpaceLimit: Int64?
    /// MP4 and MOV are written in fragments of this length, so that a process that is killed leaves a
    /// file that plays up to its last fragment (`fragment-interval`, default 1 s). Matroska and WebM
    /// are streamable by nature; this sets their cluster length. nil or zero: one unfragmented movie
    /// written at the end (a killed process then leaves an unplayable MP4/MOV).
    public var movieFragmentInterval: Duration? = .seconds(1)
    /// Pre-roll (`pre-roll`): the output keeps the last this-much of encoded video in memory while it
    /// does not record (a ring of whole GOPs, a key frame every second), so a recording begins this much
    /// before `startRecording` was called, within one GOP. The output then encodes all the time the
    /// session runs. H.264 video in MP4, MOV or Matroska, no sound track; up to 60 s. nil or zero: none.
    public var preRoll: Duration?
    /// The H.264 encoder (`encoder`): `.automatic` (default) takes a hardware encoder that passed its
    /// one-frame trial (VA-API, V4L2 memory-to-memory), else x264enc, else openh264enc; `.named` forces one.
    public var encoder: H264EncoderPreference = .automatic
    /// Replace an existing file at a plain location instead of refusing with `fileAlreadyExists`.
    public var overwritesExistingFile = false
    /// The library a finished recording is also saved to when it is complete and compatible
    /// (`save-to-library`; nil: none); the `saved-to-library` event says where, or why not.
    public var library: MediaLibrary?

    /// Settings with a default location, container, codecs and video bit rate; every other setting keeps its default.
    public init(
        location: String? = nil, container: MovieContainer? = nil, videoCodec: MovieVideoCodec? = nil,
        audioCodec: MovieAudioCodec? = nil, bitRate: Int? = nil
    ) {
        self.location = location
        self.container = container
        self.videoCodec = videoCodec
        self.audioCodec = audioCodec
        self.bitRate = bitRate
    }

    /// The container for a recording to `path`: the explicit one, else the extension's, else MP4.
    public func container(for path: String?) -> MovieContainer {
        if let container { return container }
        return path.flatMap { MovieContainer(pathExtension: ($0 as NSString).pathExtension) } ?? .mp4
    }

    /// Checks the settings (codec/container pairs, ranges, audio input) and returns the format a
    /// recording to `path` gets. What `.pipeline` checkers and `startRecording` both use.
    /// - Parameters:
    ///   - path: the recording's location (its extension chooses the container when none is set).
    ///   - hasAudioInput: whether the session has the audio input the movie would record.
    ///   - output: the output's name, for the errors.
    public func resolvedFormat(for path: String?, hasAudioInput: Bool, output: String) throws(CaptureError) -> MovieFormat {
        let container = container(for: path)
        let video = videoCodec ?? container.defaultVideoCodec
        guard container.videoCodecs.contains(video) else {
            throw .invalidMovieSettings(
                output: output,
                reason:
                    "a \(container.rawValue) file cannot hold \(video.rawValue) video; use one of \(container.videoCodecs.map(\.rawValue).joined(separator: ", "))"
            )
        }
        var audio: MovieAudioCodec?
        switch audioCodec {
        case nil: audio = hasAudioInput ? container.defaultAudioCodec : nil
        case .none?: audio = nil
        case let codec?:
            guard hasAudioInput else { throw .noAudioInput(output: output) }
            audio = codec
        }
        if let audio, !container.audioCodecs.contains(audio) {
            throw .invalidMovieSettings(
                output: output,
                reason:
                    "a \(container.rawValue) file cannot hold \(audio.rawValue) audio; use one of \(container.audioCodecs.map(\.rawValue).joined(separator: ", ")) or none"
            )
        }
        if let bitRate {
            guard bitRate >= 1000 else { throw .invalidMovieSettings(output: output, reason: "bitrate \(bitRate) is below 1000 bits per second") }
            guard video != .mjpeg else {
                throw .invalidMovieSettings(output: output, reason: "bitrate does not apply to mjpeg, which is quality-based; leave it unset")
            }
        }
        if let audioBitRate, audioBitRate < 4000 || audioBitRate > 320_000 {
            throw .invalidMovieSettings(output: output, reason: "audio bit rate \(audioBitRate) is outside 4000...320000 bits per second")
        }
        if let size, size.width < 16 || size.height < 16 || size.width % 2 != 0 || size.height % 2 != 0 {
            throw .invalidMovieSettings(output: output, reason: "size \(size) must be even and at least 16x16")
        }
        if let frameRate, frameRate.numerator <= 0 {
            throw .invalidMovieSettings(output: output, reason: "frame rate \(frameRate) must be positive")
        }
        if let maxRecordedDuration, maxRecordedDuration <= .zero {
            throw .invalidMovieSettings(output: output, reason: "max-duration must be positive")
        }
        if let maxRecordedFileSize, maxRecordedFileSize <= 0 {
            throw .invalidMovieSettings(output: output, reason: "max-file-size must be positive")
        }
        if let minFreeDiskSpaceLimit, minFreeDiskSpaceLimit < 0 {
            throw .invalidMovieSettings(output: output, reason: "min-free-disk-space must not be negative")
        }
        if let movieFragmentInterval, movieFragmentInterval < .zero {
            throw .invalidMovieSettings(output: output, reason: "fragment-interval must not be negative")
        }
        if let preRoll, preRoll != .zero {
            guard preRoll > .zero, preRoll <= .seconds(60) else {
                throw .invalidMovieSettings(output: output, reason: "pre-roll must be more than 0 and at most 60 s")
            }
            guard video == .h264, container != .webm else {
                throw .invalidMovieSettings(
                    output: output, reason: "pre-roll records H.264 video (mp4, mov or mkv), not \(video.rawValue) in \(container.rawValue)")
            }
            guard audio == nil else {
                throw .invalidMovieSettings(output: output, reason: "pre-roll records video only; set audio-codec=none (or remove the audio input)")
            }
        }
        return MovieFormat(container: container, videoCodec: video, audioCodec: audio)
    }

    /// The pre-roll in effect (nil for none or zero).
    var effectivePreRoll: Duration? { preRoll.flatMap { $0 > .zero ? $0 : nil } }
}

/// The file format and codecs of a recording, resolved from its settings.
public struct MovieFormat: Hashable, Sendable {
    /// The file format: MP4, MOV, Matroska, WebM ...
    public var container: MovieContainer
    /// The video codec.
    public var videoCodec: MovieVideoCodec
    /// nil: no audio track.
    public var audioCodec: MovieAudioCodec?
}

/// How a recording ended, as `AVCaptureFileOutputRecordingDelegate` learns it: the file, its length and
/// size, and whether it is complete. `success` is true whenever the file is complete and playable, also
/// when a limit ended the recording (then `error` says which, like `AVErrorRecordingSuccessfullyFinishedKey`).
public struct MovieRecordingResult: Sendable, Equatable {
    /// The file's path.
    public var location: String
    /// Recorded media time (pauses excluded).
    public var duration: Duration
    /// The file's size in bytes.
    public var fileSize: Int64
    /// True when the file is complete and playable.
    public var success: Bool
    /// Why the recording ended when it was not `stopRecording()`, or what went wrong.
    public var error: CaptureError?
    /// The session running time of the first recorded frame, in seconds (nil: no frame was recorded).
    public var firstTimestamp: Double?
    /// Video frames written.
    public var videoFrameCount: Int

    /// The file's URL.
    public var url: URL { URL(fileURLWithPath: location) }
}
