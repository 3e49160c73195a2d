import Capture
import CaptureControl
import Foundation

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
    /// `pick-from-library, name=, kind=, file=`: `MediaLibrary.pick`, the item kept under `name` for
    /// `picked=` of `trim-video` and `generate-thumbnail`.
    case pickFromLibrary(LibraryPick)
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
        case .pickFromLibrary: "pick-from-library"
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
    /// `picked=NAME`: the video a `pick-from-library, name=NAME` picked from the album.
    case picked(String)
}

/// `trim-video, input=FILE|recording=OUTPUT, from=, to=, location=` (optional `fast=`, `exact=`, `save-to-library=`).
public struct TrimRequest: Hashable, Sendable {
    /// What is trimmed.
    public var source: MediaSource
    /// The range, in seconds.
    public var from: Double
    /// The end of the range, in seconds (after `from`).
    public var to: Double
    /// Where the trimmed copy goes (a taken name moves on to a free one; the extension picks the container).
    public var location: String
    /// `exact=`: kept for files written when frame-exact had to be asked for; `exact=false` is `fast=true`.
    public var exact: Bool?
    /// `fast=true`: the streams copied from the keyframe at or before `from` (`VideoEditor.TrimMode.keyframe`);
    /// otherwise (the default) frame-exact (`VideoEditor.TrimMode.exact`).
    public var fast: Bool?
    /// How the trim cuts: `.keyframe` with `fast=true` or `exact=false`, else `.exact`.
    public var mode: VideoEditor.TrimMode { fast == true || exact == false ? .keyframe : .exact }
    /// `save-to-library=true`: the copy is also saved to the saved-photos album (`MediaLibrary.user()`).
    public var saveToLibrary: Bool?

    /// A trim request.
    public init(
        source: MediaSource, from: Double, to: Double, location: String, exact: Bool? = nil, fast: Bool? = nil, saveToLibrary: Bool? = nil
    ) {
        (self.source, self.from, self.to, self.location, self.exact, self.fast, self.saveToLibrary) = (source, from, to, location, exact, fast, saveToLibrary)
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
