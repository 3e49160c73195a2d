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
