import Capture

/// One thing a control surface asks of a session: a camera app's buttons (shutter, record, mode,
/// flash, torch, camera), a change of the session (an input, an output, an overlay, a preset, a
/// camera's settings) or an edit of a recorded video. Every surface — a `.pipeline` scenario, the
/// terminal's keys, `capture serve`'s HTTP API, the MQTT command topic, a Swift app — sends these to
/// one `SessionController`.
public enum ControlCommand: Sendable {
    /// Starts the session (`startRunning`).
    case start
    /// Stops the session gracefully (recordings finalized).
    case stop
    /// Takes one photo or a burst.
    case takePhoto(PhotoRequest)
    /// Starts a recording on a movie output (nil: the session's first), at `location` (nil: the
    /// output's own).
    case startRecording(output: String?, location: String?)
    /// Stops a recording and waits for its file.
    case stopRecording(output: String?)
    /// Pauses a recording.
    case pauseRecording(output: String?)
    /// Resumes a paused recording.
    case resumeRecording(output: String?)
    /// Photo or video mode: the mode's movie output (and microphone) added or removed in one
    /// configuration block, the preview going on without a gap.
    case switchMode(CaptureMode)
    /// The flash mode photos are taken with: auto, on (with a flash), off, then auto again.
    case toggleFlash(output: String?)
    /// The torch of the first camera on or off (nil: the other way from now).
    case setTorch(on: Bool?)
    /// The next camera (or the first at `position`), in one configuration block.
    case switchCamera(position: DevicePosition?)
    /// Settings of a camera, applied while the session holds the camera's configuration lock.
    case configureDevice(input: String, change: ConfigureDevice)
    /// A session preset.
    case setPreset(SessionPreset)
    /// Adds an input (on a running session: an edit of the live pipeline).
    case addInput(CaptureDeviceInput)
    /// Removes an input.
    case removeInput(name: String)
    /// Adds an output (on a running session: an edit of the live pipeline).
    case addOutput(CaptureOutput)
    /// Removes an output.
    case removeOutput(name: String)
    /// Adds an overlay to outputs (`OverlayTargets`); a text holding `{flash-mode}`, `{camera}` or
    /// `{recording}` shows the session's state and follows it.
    case addOverlay(CaptureOverlay, outputs: [String])
    /// Changes an overlay on outputs (empty: every output that has it).
    case updateOverlay(name: String, outputs: [String], change: OverlayChange)
    /// Removes an overlay from outputs (empty: every output that has it).
    case removeOverlay(name: String, outputs: [String])
    /// Writes part of a video to a new file.
    case trim(VideoTrimRequest)
    /// Writes one image of a video to a file.
    case thumbnail(VideoThumbnailRequest)
    /// Picks a photo or video from the album and keeps it under a name: what later commands read as
    /// `VideoSource.picked` (the picker's photo-library source).
    case pickFromLibrary(LibraryPick)

    /// Settings applied to a locked camera.
    public typealias ConfigureDevice = @Sendable (CaptureDevice) throws(CaptureError) -> Void
    /// A change of an overlay: the overlay as it is, the overlay as it should be.
    public typealias OverlayChange = @Sendable (CaptureOverlay) -> CaptureOverlay

    /// The `.pipeline` statement name of the command, for messages (`capture-photo`, `switch-mode`).
    public var name: String {
        switch self {
        case .start: "start"
        case .stop: "stop"
        case .takePhoto: "capture-photo"
        case .startRecording: "start-recording"
        case .stopRecording: "stop-recording"
        case .pauseRecording: "pause-recording"
        case .resumeRecording: "resume-recording"
        case .switchMode: "switch-mode"
        case .toggleFlash: "toggle-flash"
        case .setTorch: "set-torch"
        case .switchCamera: "switch-camera"
        case .configureDevice: "configure-device"
        case .setPreset: "set-preset"
        case .addInput: "add-input"
        case .removeInput: "remove-input"
        case .addOutput: "add-output"
        case .removeOutput: "remove-output"
        case .addOverlay: "add-overlay"
        case .updateOverlay: "set-overlay"
        case .removeOverlay: "remove-overlay"
        case .trim: "trim-video"
        case .thumbnail: "generate-thumbnail"
        case .pickFromLibrary: "pick-from-library"
        }
    }
}

/// Photo mode or video mode, as a camera app's switch has them.
public enum CaptureMode: String, Sendable, Hashable, CaseIterable {
    /// No movie output: the shutter takes photos.
    case photo
    /// The mode's movie output is in the session: record starts and stops it.
    case video
}

/// A photo (or a burst) to take.
public struct PhotoRequest: Sendable, Hashable {
    /// The photo output (nil: the session's first).
    public var output: String?
    /// Where the photo goes (nil: the output's own location). Relative: in the output folder.
    public var location: String?
    /// How many photos (1 by default).
    public var count: Int
    /// The time between the photos of a burst.
    public var interval: Duration?
    /// The flash mode (nil: the one `toggleFlash` chose, else the camera's).
    public var flashMode: FlashMode?
    /// Tags written into the photo.
    public var tags: PhotoTags

    /// A request; by default one photo from the first photo output, with its settings.
    public init(
        output: String? = nil, location: String? = nil, count: Int = 1, interval: Duration? = nil, flashMode: FlashMode? = nil,
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

/// A video an edit reads.
public enum VideoSource: Sendable, Hashable {
    /// A file (relative: in the output folder).
    case file(String)
    /// The last finished recording of a movie output.
    case lastRecording(output: String)
    /// The video picked from the album under that name (`ControlCommand.pickFromLibrary`).
    case picked(String)
}

/// An item to pick from the album (`MediaLibrary.pick`): the one whose file name is `file`, else the
/// newest; only photos or only videos when `kind` says so. The controller keeps it under `name`.
public struct LibraryPick: Sendable, Hashable {
    /// The name later commands know the pick by (`VideoSource.picked`).
    public var name: String
    /// Photos or videos only (nil: either).
    public var kind: MediaLibrary.MediaKind?
    /// The item's file name in the album (nil: the newest).
    public var file: String?

    /// A pick; by default the newest photo or video.
    public init(name: String, kind: MediaLibrary.MediaKind? = nil, file: String? = nil) {
        self.name = name
        self.kind = kind
        self.file = file
    }
}

/// Part of a video written to a new file.
public struct VideoTrimRequest: Sendable, Hashable {
    /// The video read.
    public var source: VideoSource
    /// Start and end, in seconds.
    public var from: Double, to: Double
    /// Where the copy goes (relative: in the output folder).
    public var location: String
    /// Cut at frames (re-encoding the edges) or at keyframes.
    public var mode: VideoEditor.TrimMode
    /// Also save the copy into the album.
    public var saveToLibrary: Bool

    /// A trim request.
    public init(source: VideoSource, from: Double, to: Double, location: String, mode: VideoEditor.TrimMode = .exact, saveToLibrary: Bool = false) {
        self.source = source
        self.from = from
        self.to = to
        self.location = location
        self.mode = mode
        self.saveToLibrary = saveToLibrary
    }
}

/// One image of a video written to a file.
public struct VideoThumbnailRequest: Sendable, Equatable {
    /// The video read.
    public var source: VideoSource
    /// The time of the image.
    public var time: AssetImageGenerator.Time
    /// The largest size the image may have (nil: the video's).
    public var maximumSize: Size?
    /// Where the image goes (relative: in the output folder); `.png` or `.jpg`.
    public var location: String

    /// A thumbnail request.
    public init(source: VideoSource, time: AssetImageGenerator.Time = .middle, maximumSize: Size? = nil, location: String) {
        self.source = source
        self.time = time
        self.maximumSize = maximumSize
        self.location = location
    }
}

/// What a command did.
public enum ControlResult: Sendable {
    /// Done; nothing to hand back (start, stop, a change of the session).
    case done
    /// The photos taken, their locations included.
    case photos([Photo])
    /// The recording started: the output and the file it writes.
    case recordingStarted(output: String, location: String)
    /// The recording stopped: its file.
    case recordingStopped(output: String, MovieRecordingResult)
    /// The recording is paused: the file it goes on in when resumed, and what it holds so far.
    case recordingPaused(output: String, location: String, duration: Duration)
    /// The recording goes on: its file, and what it held when it resumed.
    case recordingResumed(output: String, location: String, duration: Duration)
    /// The mode the session is in now.
    case mode(CaptureMode)
    /// The flash mode photos are now taken with.
    case flashMode(FlashMode)
    /// The torch is on or off now.
    case torch(on: Bool)
    /// The camera in use now.
    case camera(CaptureDeviceInput)
    /// The trimmed copy (and its place in the album, when saved there).
    case trimmed(VideoEditor.TrimResult, libraryLocation: String?)
    /// The image written, and the video it came from.
    case thumbnail(source: String, location: String, AssetImageGenerator.Image)
    /// The item picked from the album, and the name it is kept under.
    case picked(name: String, MediaLibrary.Item)
}
