import GStreamer

/// Every error the capture layer throws. Each case names the object it is about (device, input,
/// output, preset, file) and says what to do when there is something to do.
public enum CaptureError: Error, Equatable, Sendable, CustomStringConvertible {
    // Devices and inputs
    /// No capture device has that unique ID; `capture devices` lists the devices of this machine.
    case deviceNotFound(id: String)
    /// The device is in use by another program or session; `detail` is what the driver said.
    case deviceBusy(id: String, detail: String)
    /// The driver refused to start streaming (VIDIOC_STREAMON or its buffer allocation failed).
    case deviceStartFailed(id: String, detail: String)
    /// The user may not open the device node at `path` (not in the `video` group, or its permissions).
    case permissionDenied(id: String, path: String)
    /// The device went away (unplugged) while the session used it.
    case deviceDisconnected(id: String)
    /// The machine has no capture device of that media type.
    case noDeviceAvailable(media: MediaType)
    /// The device captures another media type than the one asked for (an audio device where video is needed, or the other way round).
    case deviceMediaMismatch(id: String, expected: MediaType, actual: MediaType)
    /// A `file:` input that is not a media file GStreamer can play (text, empty, a folder, a device).
    case notAMediaFile(path: String, reason: String)

    // Session configuration
    /// The input cannot serve the preset: the device has no format at the preset's size or a larger one
    /// to scale from (upscaling is refused), or none at the size and frame rate asked for; `reason` says which.
    case presetNotSupported(preset: SessionPreset, input: String, reason: String)
    /// The input was added to the session twice.
    case inputAlreadyInSession(name: String)
    /// The output was added to the session twice.
    case outputAlreadyInSession(name: String)
    /// The output belongs to another session; remove it from that one first.
    case outputInAnotherSession(name: String)
    /// Two inputs, or two outputs, of the session have the same name; `kind` is `input` or `output`.
    case duplicateName(kind: String, name: String)
    /// The session has no input of that name.
    case unknownInput(name: String)
    /// The session has no output of that name.
    case unknownOutput(name: String)
    /// The output needs frames from a video input and the session has none.
    case noVideoInput(output: String)
    /// A setting of `object` that cannot be used; `reason` says what is wrong with it.
    case invalidConfiguration(object: String, reason: String)
    /// `startRunning()` was called between `beginConfiguration()` and `commitConfiguration()`; commit first.
    case startInsideConfiguration
    /// `commitConfiguration()` or `cancelConfiguration()` was called without a matching `beginConfiguration()`.
    case commitWithoutBegin
    /// A committed configuration had more than one error and none of it was applied; `errors` lists them all.
    case configurationRejected(errors: [CaptureError])

    // Lifecycle
    /// The operation needs a running session (or a running input or output): `object` names what is not running.
    case notRunning(object: String)
    /// The session is already running.
    case alreadyRunning
    /// The pipeline did not reach the playing state within the session's state timeout (seconds).
    case startTimedOut(seconds: Double)
    /// A bounded wait inside the session ended: `waitingFor` says for what (a pad to block, a branch
    /// to unlink, a file to be finished ...).
    case timedOut(waitingFor: String, seconds: Double)
    /// The input and its device could not agree on a format (caps negotiation failed); `detail` says what GStreamer reported.
    case formatNotNegotiated(input: String, detail: String)
    /// A GStreamer element posted an error while the session ran: `message` is its message, `debug` its debug text.
    case streamingFailed(element: String, message: String, debug: String?)
    /// The GStreamer element `factory`, needed by `neededBy`, is not installed (`make install-deps`, or the plugin package that provides it).
    case elementMissing(factory: String, neededBy: String)
    /// The GStreamer elements for `object` could not be made or linked; `reason` says why.
    case pipelineBuildFailed(object: String, reason: String)

    // Outputs
    /// An output kind that this version of the library does not provide yet.
    case notAvailableYet(feature: String)
    /// The file to write exists and overwriting was not asked for; choose another location or a `%d` pattern.
    case fileAlreadyExists(path: String)
    /// A location that cannot name a file to write: empty, a folder, a device, a number directive
    /// other than `%d`/`%05d` (width up to 9), another `%`.
    case invalidLocation(path: String, reason: String)
    /// A file or its folder at `path` cannot be created or written; `reason` is the system's reason.
    case locationNotWritable(path: String, reason: String)
    /// The disk filled up while `path` was written.
    case diskFull(path: String)
    /// Photo settings the photo output cannot use (codec, quality, size, crop ...); `reason` says which and why.
    case invalidPhotoSettings(output: String, reason: String)
    /// The photo output received no frame to take a photo from within `seconds`.
    case captureTimedOut(output: String, seconds: Double)
    /// A flash mode other than `off` was asked of a device that has no flash.
    case flashNotSupported(device: String)

    // Movie recording
    /// The movie output is already recording to `location`; that recording goes on.
    case recordingInProgress(output: String, location: String)
    /// The movie output was asked to stop, pause or resume a recording while not recording.
    case notRecording(output: String)
    /// Movie settings the movie output cannot use (container, codecs, bit rate, limits ...); `reason` says which and why.
    case invalidMovieSettings(output: String, reason: String)
    /// The movie settings ask for an audio codec and the session has no audio input; add one or use no audio codec.
    case noAudioInput(output: String)
    /// The recording reached the output's maximum duration (seconds) and was stopped; the file is complete.
    case maximumDurationReached(output: String, seconds: Double)
    /// The recording reached the output's maximum file size and was stopped; the file is complete.
    case maximumFileSizeReached(output: String, bytes: Int64)
    /// The free space at `path` is below the output's minimum (bytes): a recording does not start, or one
    /// that runs is stopped, its file complete.
    case minimumFreeDiskSpaceReached(output: String, path: String, bytes: Int64)
    /// The session was interrupted during the recording; the file at `location` was finished with what was recorded.
    case recordingInterrupted(output: String, location: String)
    /// The recording to `location` could not be finished; `reason` says why.
    case recordingFailed(output: String, location: String, reason: String)

    // Machine-readable codes (metadata output)
    /// A name that is not a machine-readable code type; `known` lists the type names.
    case unknownMetadataObjectType(name: String, known: [String])
    /// A code type that the metadata output's decoder `backend` cannot read; `available` lists the types it reads.
    case metadataObjectTypeNotAvailable(type: String, object: String, backend: String, available: [String])

    // Device controls (lockForConfiguration, configure-device, `capture controls`)
    /// Another holder has the device's configuration lock: `holder` says who.
    case deviceLocked(device: String, holder: String)
    /// A control was changed without `lockForConfiguration()`.
    case deviceNotLocked(device: String, control: String)
    /// No control of that name on the device; `known` lists the device's controls.
    case unknownControl(device: String, control: String, known: [String])
    /// A value outside the control's range (or not one of its menu items).
    case controlOutOfRange(device: String, control: String, value: String, range: String)
    /// The device lacks the control behind a feature (focus on a fixed-focus camera), or the control
    /// cannot be written (read-only).
    case controlNotSupported(device: String, control: String, reason: String)
    /// The driver refused the write, or the device went away while it was configured.
    case controlFailed(device: String, control: String, reason: String)

    // Streams (`kind=stream`, `capture stream`)
    /// A stream URL that is not one this framework takes: scheme, host, port, path or query.
    case invalidStreamUrl(url: String, reason: String)
    /// A stream output's settings that cannot be used (bit rate, size, audio codec).
    case invalidStreamSettings(output: String, reason: String)
    /// The RTSP server could not listen on the address and port of a `serve=` URL (taken, not local).
    case streamServerFailed(url: String, reason: String)
    // Events and commands over MQTT (`--events mqtt://...`)
    /// An MQTT URL that is not `mqtt[s]://HOST[:PORT]/PREFIX` with a usable host, port and topic prefix.
    case invalidMqttUrl(url: String, reason: String)
    /// An MQTT option that cannot be used: a password or TLS file that cannot be read, a bad client id.
    case invalidMqttOptions(reason: String)
    // Overlays
    /// An overlay's value that cannot be drawn: `key` names the setting (`position`, `size`,
    /// `opacity`, `points` ...), `reason` what is wrong with it.
    case invalidOverlay(overlay: String, key: String, reason: String)
    /// A font family that no installed font provides; `known` lists some that are.
    case unknownFont(overlay: String, font: String, known: [String])
    /// An overlay image that cannot be read as a PNG picture.
    case overlayImageUnreadable(overlay: String, path: String, reason: String)
    /// No overlay of that name on the output (or on any output, when `output` is nil).
    case unknownOverlay(name: String, output: String?)
    // The photo library and editing (MediaLibrary, VideoEditor, AssetImageGenerator, ImageEditor)
    /// A video the library does not take: no video stream, a container or codec it cannot play, no
    /// duration. `reason` says which.
    case videoNotCompatible(path: String, reason: String)
    /// A time outside the media's duration (seconds).
    case timeOutOfRange(path: String, time: Double, duration: Double)
    /// A trim range whose start is not before its end.
    case invalidTimeRange(path: String, from: Double, to: Double)
    /// An exact trim whose range holds no frame of the video: no frame is shown from `from` up to
    /// `to` (a range shorter than a frame, or inside a gap of a variable-frame-rate video).
    case noFrameInRange(path: String, from: Double, to: Double)
    /// GStreamer failed while a file was trimmed, or an image made from it; nothing was left behind.
    case editingFailed(path: String, reason: String)
    /// A trim or an image asked for the last recording of a movie output that has not finished one.
    case noRecordingYet(output: String)
    /// A remote command (HTTP, MQTT) named a file, a folder, a device or a stream destination that
    /// remote callers may not use: outside the session's output folder, through a link, not a regular
    /// file, or not on the list the operator allowed at start (docs/serve.md, "What remote commands may
    /// name"). `what` is the value as it was given, `reason` why it is refused.
    case notPermitted(what: String, reason: String)
    /// A remote caller asked for media work (decoding, scaling, cropping a file) while as much of it as
    /// the session allows was already running and waiting: nothing was done; ask again later.
    case busy(what: String, reason: String)
    /// Nothing in the album matches a pick: no item at all, none of `kind` (`photo` or `video`), or none
    /// whose file name is `name`; `folders` are the album's folders looked in.
    case libraryItemNotFound(kind: String?, name: String?, folders: [String])

    /// Every `name`, in the order the cases are declared: what `expect-error=` accepts (with the
    /// runner's own `wait-timed-out`) and what docs/pipeline-format.md lists. A test checks this list
    /// against the cases declared above and against that document.
    public static let allNames: [String] = [
        "device-not-found", "device-busy", "device-start-failed", "permission-denied", "device-disconnected",
        "no-device-available", "device-media-mismatch", "not-a-media-file", "preset-not-supported", "input-already-in-session",
        "output-already-in-session", "output-in-another-session", "duplicate-name", "unknown-input",
        "unknown-output", "no-video-input", "invalid-configuration", "start-inside-configuration",
        "commit-without-begin", "configuration-rejected", "not-running", "already-running", "start-timed-out",
        "timed-out", "format-not-negotiated", "streaming-failed", "element-missing", "pipeline-build-failed",
        "not-available-yet", "file-already-exists", "invalid-location", "location-not-writable", "disk-full", "invalid-photo-settings",
        "capture-timed-out", "flash-not-supported", "recording-in-progress", "not-recording",
        "invalid-movie-settings", "no-audio-input", "maximum-duration-reached", "maximum-file-size-reached",
        "minimum-free-disk-space-reached", "recording-interrupted", "recording-failed",
        "unknown-metadata-object-type", "metadata-object-type-not-available", "device-locked", "device-not-locked",
        "unknown-control", "control-out-of-range", "control-not-supported", "control-failed",
        "invalid-stream-url", "invalid-stream-settings", "stream-server-failed", "invalid-mqtt-url", "invalid-mqtt-options",
        "invalid-overlay", "unknown-font", "overlay-image-unreadable", "unknown-overlay",
        "video-not-compatible", "time-out-of-range", "invalid-time-range", "no-frame-in-range", "editing-failed",
        "no-recording-yet", "not-permitted", "busy", "library-item-not-found",
    ]

    /// A stable kebab-case name for scripts and `.pipeline` `expect-error=`.
    public var name: String {
        switch self {
        case .deviceNotFound: "device-not-found"
        case .deviceBusy: "device-busy"
        case .deviceStartFailed: "device-start-failed"
        case .permissionDenied: "permission-denied"
        case .deviceDisconnected: "device-disconnected"
        case .noDeviceAvailable: "no-device-available"
        case .deviceMediaMismatch: "device-media-mismatch"
        case .notAMediaFile: "not-a-media-file"
        case .presetNotSupported: "preset-not-supported"
        case .inputAlreadyInSession: "input-already-in-session"
        case .outputAlreadyInSession: "output-already-in-session"
        case .outputInAnotherSession: "output-in-another-session"
        case .duplicateName: "duplicate-name"
        case .unknownInput: "unknown-input"
        case .unknownOutput: "unknown-output"
        case .noVideoInput: "no-video-input"
        case .invalidConfiguration: "invalid-configuration"
        case .startInsideConfiguration: "start-inside-configuration"
        case .commitWithoutBegin: "commit-without-begin"
        case .configurationRejected: "configuration-rejected"
        case .notRunning: "not-running"
        case .alreadyRunning: "already-running"
        case .startTimedOut: "start-timed-out"
        case .timedOut: "timed-out"
        case .formatNotNegotiated: "format-not-negotiated"
        case .streamingFailed: "streaming-failed"
        case .elementMissing: "element-missing"
        case .pipelineBuildFailed: "pipeline-build-failed"
        case .notAvailableYet: "not-available-yet"
        case .fileAlreadyExists: "file-already-exists"
        case .invalidLocation: "invalid-location"
        case .locationNotWritable: "location-not-writable"
        case .diskFull: "disk-full"
        case .invalidPhotoSettings: "invalid-photo-settings"
        case .captureTimedOut: "capture-timed-out"
        case .flashNotSupported: "flash-not-supported"
        case .recordingInProgress: "recording-in-progress"
        case .notRecording: "not-recording"
        case .invalidMovieSettings: "invalid-movie-settings"
        case .noAudioInput: "no-audio-input"
        case .maximumDurationReached: "maximum-duration-reached"
        case .maximumFileSizeReached: "maximum-file-size-reached"
        case .minimumFreeDiskSpaceReached: "minimum-free-disk-space-reached"
        case .recordingInterrupted: "recording-interrupted"
        case .recordingFailed: "recording-failed"
        case .unknownMetadataObjectType: "unknown-metadata-object-type"
        case .metadataObjectTypeNotAvailable: "metadata-object-type-not-available"
        case .deviceLocked: "device-locked"
        case .deviceNotLocked: "device-not-locked"
        case .unknownControl: "unknown-control"
        case .controlOutOfRange: "control-out-of-range"
        case .controlNotSupported: "control-not-supported"
        case .controlFailed: "control-failed"
        case .invalidStreamUrl: "invalid-stream-url"
        case .invalidStreamSettings: "invalid-stream-settings"
        case .streamServerFailed: "stream-server-failed"
        case .invalidMqttUrl: "invalid-mqtt-url"
        case .invalidMqttOptions: "invalid-mqtt-options"
        case .invalidOverlay: "invalid-overlay"
        case .unknownFont: "unknown-font"
        case .overlayImageUnreadable: "overlay-image-unreadable"
        case .unknownOverlay: "unknown-overlay"
        case .videoNotCompatible: "video-not-compatible"
        case .timeOutOfRange: "time-out-of-range"
        case .invalidTimeRange: "invalid-time-range"
        case .noFrameInRange: "no-frame-in-range"
        case .editingFailed: "editing-failed"
        case .noRecordingYet: "no-recording-yet"
        case .notPermitted: "not-permitted"
        case .busy: "busy"
        case .libraryItemNotFound: "library-item-not-found"
        }
    }

    /// True for the errors that mean a device cannot be used now (not there, busy, or not allowed to be
    /// opened): the ones an app falls back from to another device.
    public var meansDeviceUnusable: Bool {
        switch self {
        case .deviceNotFound, .deviceBusy, .permissionDenied, .noDeviceAvailable, .deviceDisconnected: true
        default: false
        }
    }

    /// What went wrong, in one line: names, paths and values quoted in it have their control
    /// characters escaped, so an error cannot forge lines of output.
    public var description: String { FileNaming.printable(message) }

    private var message: String {
        switch self {
        case .deviceNotFound(let id):
            return "no capture device '\(id)'; run `capture devices` to list the devices of this machine"
        case .deviceStartFailed(let id, let detail):
            return "the device '\(id)' could not start streaming: \(detail)"
        case .deviceBusy(let id, let detail):
            return "the device '\(id)' is busy (another program or session is using it): \(detail)"
        case .permissionDenied(let id, let path):
            return "no permission to open the device '\(id)' at \(path); add the user to the 'video' group or fix the permissions"
        case .deviceDisconnected(let id):
            return "the device '\(id)' was disconnected"
        case .noDeviceAvailable(let media):
            let (virtual, option) = media == .video ? ("test-pattern", "-i") : ("test-tone", "--audio")
            return
                "no \(media.rawValue) capture device is available on this machine, so there is no default one; run `capture devices`, or name the virtual \(virtual) to run without one (device=\(virtual) or fallback=\(virtual) in a .pipeline file, \(option) \(virtual) on the command line)"
        case .deviceMediaMismatch(let id, let expected, let actual):
            return "the device '\(id)' captures \(actual.rawValue), not \(expected.rawValue)"
        case .notAMediaFile(let path, let reason):
            return "'\(FileNaming.printable(path))' is not a media file: \(reason)"
        case .presetNotSupported(let preset, let input, let reason):
            return "the session preset '\(preset.rawValue)' cannot be served by input '\(input)': \(reason)"
        case .inputAlreadyInSession(let name):
            return "the input '\(name)' is already in this session"
        case .outputAlreadyInSession(let name):
            return "the output '\(name)' is already in this session"
        case .outputInAnotherSession(let name):
            return "the output '\(name)' belongs to another session; remove it there first"
        case .duplicateName(let kind, let name):
            return "two \(kind)s are named '\(name)'; names must be unique in a session"
        case .unknownInput(let name):
            return "the session has no input named '\(name)'"
        case .unknownOutput(let name):
            return "the session has no output named '\(name)'"
        case .noVideoInput(let output):
            return "the output '\(output)' needs a video input and the session has none"
        case .invalidConfiguration(let object, let reason):
            return "\(object): \(reason)"
        case .startInsideConfiguration:
            return "startRunning() was called inside beginConfiguration()/commitConfiguration(); commit first"
        case .commitWithoutBegin:
            return "commitConfiguration() or cancelConfiguration() was called without a matching beginConfiguration()"
        case .configurationRejected(let errors):
            return "the configuration was rejected as a whole: " + errors.map(\.description).joined(separator: "; ")
        case .notRunning(let object):
            return "\(object) is not running; start the session first"
        case .alreadyRunning:
            return "the session is already running"
        case .startTimedOut(let seconds):
            return "the session did not start within \(seconds) s"
        case .timedOut(let what, let seconds):
            return "gave up waiting for \(what) after \(seconds) s"
        case .formatNotNegotiated(let input, let detail):
            return "input '\(input)' could not agree on a format with the device: \(detail)"
        case .streamingFailed(let element, let message, _):
            return "\(element): \(message)"
        case .elementMissing(let factory, let neededBy):
            return
                "the GStreamer element '\(factory)' needed by \(neededBy) is not installed; run `make install-deps` (or install the GStreamer plugin package that provides it)"
        case .pipelineBuildFailed(let object, let reason):
            return "could not build the pipeline for \(object): \(reason)"
        case .notAvailableYet(let feature):
            return "\(feature) is not available yet in this version of capture"
        case .fileAlreadyExists(let path):
            return "the file \(path) already exists; choose another location, use a %d pattern, or allow overwriting"
        case .invalidLocation(let path, let reason):
            return "the location '\(FileNaming.printable(path))' cannot be used: \(reason)"
        case .locationNotWritable(let path, let reason):
            return "cannot write to \(path): \(reason)"
        case .diskFull(let path):
            return "the disk is full: \(path) could not be written; free some space or choose another location"
        case .invalidPhotoSettings(let output, let reason):
            return "photo output '\(output)': \(reason)"
        case .captureTimedOut(let output, let seconds):
            return "photo output '\(output)' received no frame within \(seconds) s; is the camera delivering?"
        case .flashNotSupported(let device):
            return "the device '\(device)' has no flash; use flash-mode=off"
        case .recordingInProgress(let output, let location):
            return "movie output '\(output)' is already recording to \(location); stop that recording first (it goes on)"
        case .notRecording(let output):
            return "movie output '\(output)' is not recording"
        case .invalidMovieSettings(let output, let reason):
            return "movie output '\(output)': \(reason)"
        case .noAudioInput(let output):
            return
                "movie output '\(output)' asks for an audio codec but the session has no audio input; add one (device=default-audio or test-tone) or use audio-codec=none"
        case .maximumDurationReached(let output, let seconds):
            return "movie output '\(output)' reached its maximum duration of \(seconds) s; the file is complete"
        case .maximumFileSizeReached(let output, let bytes):
            return "movie output '\(output)' reached its maximum file size of \(bytes) bytes; the file is complete"
        case .minimumFreeDiskSpaceReached(let output, let path, let bytes):
            return "movie output '\(output)': the free space at \(path) fell below \(bytes) bytes; the file is complete"
        case .recordingInterrupted(let output, let location):
            return "movie output '\(output)': the session was interrupted while recording \(location); the file was finished with what was recorded"
        case .recordingFailed(let output, let location, let reason):
            return "movie output '\(output)' could not finish \(location): \(reason)"
        case .unknownMetadataObjectType(let name, let known):
            return "'\(name)' is not a machine-readable code type; the types are \(known.joined(separator: ", "))"
        case .metadataObjectTypeNotAvailable(let type, let object, let backend, let available):
            return "\(object): the code type '\(type)' is not available with the \(backend) backend; it reads \(available.joined(separator: ", "))"
        case .deviceLocked(let device, let holder):
            return "the device '\(device)' is locked for configuration by \(holder); wait until it calls unlockForConfiguration()"
        case .deviceNotLocked(let device, let control):
            return "cannot change \(control) of the device '\(device)' without its configuration lock; call lockForConfiguration() first"
        case .unknownControl(let device, let control, let known):
            return
                "the device '\(device)' has no control '\(control)'\(known.isEmpty ? " (it has no controls)" : "; its controls are \(known.joined(separator: ", "))")"
        case .controlOutOfRange(let device, let control, let value, let range):
            return "\(value) is out of range for \(control) of the device '\(device)': \(range)"
        case .controlNotSupported(let device, let control, let reason):
            return "the device '\(device)' does not support \(control): \(reason)"
        case .controlFailed(let device, let control, let reason):
            return "the device '\(device)' did not take \(control): \(reason)"
        case .invalidStreamUrl(let url, let reason):
            return "the stream URL '\(url)' cannot be used: \(reason)"
        case .invalidStreamSettings(let output, let reason):
            return "stream output '\(output)': \(reason)"
        case .streamServerFailed(let url, let reason):
            return "cannot serve \(url): \(reason); choose another port (or stop the program using it)"
        case .invalidMqttUrl(let url, let reason):
            return "the MQTT URL '\(url)' cannot be used: \(reason); write mqtt://HOST[:PORT]/PREFIX (mqtts:// for TLS)"
        case .invalidMqttOptions(let reason):
            return "MQTT: \(reason)"
        case .invalidOverlay(let overlay, let key, let reason):
            return "overlay '\(overlay)': \(key) \(reason)"
        case .unknownFont(let overlay, let font, let known):
            return
                "overlay '\(overlay)': no installed font provides the family '\(font)'; installed families include \(known.prefix(8).joined(separator: ", "))"
        case .overlayImageUnreadable(let overlay, let path, let reason):
            return "overlay '\(overlay)': cannot read the image \(path): \(reason)"
        case .unknownOverlay(let name, let output):
            return output.map { "the output '\($0)' has no overlay named '\(name)'" } ?? "no output of the session has an overlay named '\(name)'"
        case .videoNotCompatible(let path, let reason):
            return "the video \(FileNaming.printable(path)) cannot be saved to the library: \(reason)"
        case .timeOutOfRange(let path, let time, let duration):
            return "the time \(Self.seconds(time)) s is outside \(FileNaming.printable(path)), which lasts \(Self.seconds(duration)) s"
        case .invalidTimeRange(let path, let from, let to):
            return
                "the range from \(Self.seconds(from)) s to \(Self.seconds(to)) s of \(FileNaming.printable(path)) is empty; the start must come before the end"
        case .noFrameInRange(let path, let from, let to):
            return
                "no frame of \(FileNaming.printable(path)) is shown from \(Self.seconds(from)) s to \(Self.seconds(to)) s; an exact trim needs a range that holds at least one frame"
        case .editingFailed(let path, let reason):
            return "could not edit \(FileNaming.printable(path)): \(reason)"
        case .noRecordingYet(let output):
            return "No video recorded yet: movie output '\(FileNaming.printable(output))' has not finished a recording"
        case .notPermitted(let what, let reason):
            return "a remote command may not use '\(FileNaming.printable(String(what.prefix(200))))': \(reason)"
        case .busy(let what, let reason):
            return "\(what) is busy: \(reason)"
        case .libraryItemNotFound(let kind, let name, let folders):
            let what = name.map { "no \(kind ?? "photo or video") named '\(FileNaming.printable($0))'" } ?? "no \(kind ?? "photo or video")"
            return
                "the album has \(what) (looked in \(folders.joined(separator: " and "))); save one there first (save-to-library=true, `capture library add FILE`), or pick another"
        }
    }
}

extension CaptureError {
    /// Seconds as the messages write them: up to three decimals, no trailing zeros.
    static func seconds(_ value: Double) -> String {
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

extension CaptureError {
    /// The capture error a barcode decoder's error means (same names, same words).
    init(_ error: BarcodeError) {
        switch error {
        case .unknownType(let name, let known): self = .unknownMetadataObjectType(name: name, known: known)
        case .unknownBackend(let name, let known):
            self = .invalidConfiguration(object: "metadata backend '\(name)'", reason: "the backend must be one of \(known.joined(separator: ", "))")
        case .typeNotAvailable(let type, let object, let backend, let available):
            self = .metadataObjectTypeNotAvailable(type: type, object: object, backend: backend, available: available)
        case .unreadableImage(let path, let reason): self = .invalidConfiguration(object: path, reason: reason)
        }
    }

    init(_ error: GStreamerError, object: String) {
        switch error {
        case .elementNotFound(let factory): self = .elementMissing(factory: factory, neededBy: object)
        default: self = .pipelineBuildFailed(object: object, reason: error.description)
        }
    }
}
