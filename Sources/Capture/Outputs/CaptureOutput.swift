import Foundation
import GStreamer

/// How an output is connected to its input, like `AVCaptureConnection`.
public struct ConnectionSettings: Hashable, Sendable {
    /// The video input feeding the output; nil means the session's first video input.
    public var input: String?
    /// Clockwise rotation of the picture, 0, 90, 180 or 270, like `AVCaptureConnection.videoRotationAngle`.
    /// Photos and movies show it through a tag unless `rotatesPixels` is true; every other output
    /// (preview, frames, stream, codes) turns its pixels.
    public var rotation: Int = 0
    /// Mirror horizontally (front-camera style), like `AVCaptureConnection.isVideoMirrored`; stored
    /// like `rotation`.
    public var isMirrored: Bool = false
    /// A disabled connection keeps the output in the session without feeding it.
    public var isEnabled: Bool = true
    /// How a photo or movie output stores `rotation` and `isMirrored`. False (the default, as iOS
    /// stores them): the pixels stay as the camera gives them and the file says how to show them:
    /// a photo's EXIF Orientation tag, an MP4 or MOV movie's track matrix (a mirrored movie has its
    /// mirror in the pixels and the rest of the turn in the matrix; Matroska and WebM, which
    /// GStreamer writes no orientation into, get turned pixels). True: the pixels are turned and the
    /// file is upright as stored. Other outputs always turn their pixels.
    public var rotatesPixels: Bool = false

    /// A connection to `input` (nil: the session's first video input), turned by `rotation` degrees
    /// clockwise, mirrored or not, enabled or not; `rotatesPixels`: photos and movies turn their
    /// pixels instead of tagging the turn.
    public init(input: String? = nil, rotation: Int = 0, isMirrored: Bool = false, isEnabled: Bool = true, rotatesPixels: Bool = false) {
        self.input = input
        self.rotation = rotation
        self.isMirrored = isMirrored
        self.isEnabled = isEnabled
        self.rotatesPixels = rotatesPixels
    }

    /// The connection's turn: its rotation, then its mirror.
    var turn: PixelTurn { PixelTurn(rotation: rotation, mirrored: isMirrored) }

    /// The videoflip elements that turn and mirror the pixels.
    func orientationElements(prefix: String) -> [ElementSpec] { turn.elements(prefix: prefix) }
}

/// What the compiler tells an output when it describes its branch, and what the owner tells it once
/// that graph runs (`CaptureOutput.configurationApplied`).
struct BranchContext: Sendable {
    var output: String
    /// The video input feeding this output, when the session has one.
    let videoInput: SourceSegment?
    /// The audio inputs of the session.
    let audioInputs: [SourceSegment]
    let connection: ConnectionSettings
    /// The output's recording, as the owner holds it (movie outputs): a snapshot, read only.
    var recording: RecordingRequest? = nil
    /// True when the compiler shows the session as it runs while every movie output records
    /// (`CaptureSession.compilePipelines()`): a movie output then describes its recording branch.
    var assumesRecording = false
    /// Inputs replaced in this configuration by another of the same media (old name -> new name).
    var replacedInputs: [String: String] = [:]
    /// The H.264 encoders other outputs of the session offer to share (`SharedEncoder`).
    var sharedEncoders: [SharedEncoder] = []
    /// The encoder choice and device controllability the compilation is made against.
    var environment: CompileEnvironment

    /// The size the session's preset gives outputs.
    var outputSize: Size? { videoInput?.format?.outputSize }
    var frameRate: FrameRate? { videoInput?.format?.frameRate }

    /// The common head of a video branch: a queue (leaky for outputs that must never hold back the
    /// others), conversion, scaling to `size`, rotation and mirroring (`turn`, else the connection's),
    /// then (with `overlays`) the
    /// `overlaycomposition` element that draws the output's overlays. That element is always there, so
    /// adding, changing or removing an overlay on a running session changes no element and no caps;
    /// without overlays it passes frames through untouched.
    /// With `squarePixels`, the scaled frames have square pixels (the scale stretches rather than keep
    /// the display aspect ratio through the pixel aspect ratio): what a view of an exact size needs.
    func videoHead(
        leaky: Bool, maxBuffers: Int = 3, size: Size? = nil, format: String? = nil, maxRate: Double? = nil,
        overlays: Bool = true, squarePixels: Bool = false, turn: PixelTurn? = nil
    ) throws(CaptureError) -> [ElementSpec] {
        guard let videoInput else { throw .noVideoInput(output: output) }
        var elements: [ElementSpec] = [
            ElementSpec(
                "queue", name: "\(output)_queue",
                [("max-size-buffers", "\(maxBuffers)"), ("max-size-bytes", "0"), ("max-size-time", "0")] + (leaky ? [("leaky", "downstream")] : []))
        ]
        if let maxRate {
            elements.append(ElementSpec("videorate", name: "\(output)_rate", [("drop-only", "true")], live: [("max-rate", "\(Int(maxRate.rounded(.up)))")]))
        }
        elements.append(ElementSpec("videoconvert", name: "\(output)_convert"))
        // With square pixels the scale fills the size it is given (videoscale would otherwise add
        // black borders to keep the display aspect ratio: `resize` stretches on purpose).
        elements.append(ElementSpec("videoscale", name: "\(output)_scale", squarePixels ? [("add-borders", "false")] : []))
        let target = size ?? outputSize ?? videoInput.format?.outputSize
        elements.append(.capsFilter(name: "\(output)_size", caps: Self.scaleCaps(size: target, format: format, squarePixels: squarePixels)))
        elements += (turn ?? connection.turn).elements(prefix: output)
        if overlays { elements.append(ElementSpec("overlaycomposition", name: CaptureOutput.overlayElementName(output))) }
        return elements
    }

    /// The caps of a video head's scale: raw video, in `format` and at `size` when given.
    static func scaleCaps(size: Size?, format: String?, squarePixels: Bool) -> String {
        var caps = "video/x-raw"
        if let format { caps += ",format=\(format)" }
        if let size { caps += ",width=\(size.width),height=\(size.height)" }
        if squarePixels { caps += ",pixel-aspect-ratio=1/1" }
        return caps
    }

    /// The size of the pixels an output receives after rotation.
    func rotatedSize(_ size: Size?) -> Size? {
        guard let size else { return nil }
        return connection.rotation == 90 || connection.rotation == 270 ? Size(width: size.height, height: size.width) : size
    }
}

/// An output of a capture session. Each output kind compiles to one branch on the input's tee.
public class CaptureOutput: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: every mutable field below is behind a lock (`Locked`).
    /// The output's name in the session (unique; used by `.pipeline` files and events).
    public let name: String
    private let connectionState: Locked<ConnectionSettings>
    /// The session the output belongs to (weak: the session owns its outputs, not the reverse).
    let ownerState = Locked<WeakSession>(WeakSession(nil))

    /// The session this output is part of, if any.
    var session: CaptureSession? { ownerState.value.session }

    let handleState = Locked<BranchHandle?>(nil)
    /// The drawer of the branch's overlay element while attached.
    private let overlayDrawer = Locked<OverlayDrawer?>(nil)

    /// The output's overlays (drawn by its branch's `overlaycomposition` element).
    let overlayCanvas: OverlayCanvas

    init(name: String) {
        self.name = name
        self.connectionState = Locked(ConnectionSettings())
        self.overlayCanvas = OverlayCanvas(owner: "\(name)")
    }

    /// The name of the element of an output's branch that draws its overlays.
    static func overlayElementName(_ output: String) -> String { "\(output)_overlay" }

    // MARK: Overlays

    /// False for outputs whose frames are never seen (a metadata output reads codes from them).
    public var acceptsOverlays: Bool { true }

    /// The overlays drawn on this output's video, bottom to top.
    public var overlays: [CaptureOverlay] { overlayCanvas.overlays }

    /// Draws an overlay on this output's video, on top of the others: on a running session from the
    /// next frame, with nothing restarted. Throws when the overlay cannot be drawn (a missing picture,
    /// an unknown font, a value out of range), when its name is taken, or when the output takes no
    /// overlays; the session goes on either way.
    public func addOverlay(_ overlay: CaptureOverlay) throws(CaptureError) {
        guard acceptsOverlays else {
            throw .invalidConfiguration(
                object: description,
                reason: "a \(kind) output draws no overlays (its frames are not seen); add the overlay to a preview, photo, movie or frames output")
        }
        try overlayCanvas.add(overlay)
    }

    /// Changes the overlay named `name` (its text, position, opacity ...) in place. The change is
    /// checked first: when it cannot be drawn, the overlay stays as it was.
    public func updateOverlay(named name: String, _ change: (inout CaptureOverlay) -> Void) throws(CaptureError) {
        guard overlayCanvas.contains(name) else { throw .unknownOverlay(name: name, output: self.name) }
        try overlayCanvas.update(named: name, change)
    }

    /// Removes the overlay named `name`.
    public func removeOverlay(named name: String) throws(CaptureError) {
        guard overlayCanvas.remove(named: name) else { throw .unknownOverlay(name: name, output: self.name) }
    }

    /// The output's connection to its input.
    public var connection: ConnectionSettings {
        get { connectionState.value }
        set { connectionState.value = newValue }
    }

    /// The kind name used in `.pipeline` files ("frames", "preview", "photo", "movie", "metadata").
    public var kind: String { "output" }
    /// The output's kind and name: `photo output 'photo'`.
    public var description: String { "\(kind) output '\(name)'" }

    /// True while the output's branch is part of a running pipeline.
    public var isAttached: Bool { handleState.value != nil }

    /// Describes the output's branch from its settings and the context (inputs, connection, the
    /// recording snapshot the owner holds); nil while the output needs none (a movie output that is not
    /// recording). Pure: it reads and writes nothing else, and the owner calls it once per commit, so a
    /// configuration that is rejected leaves no output changed. Subclasses override.
    func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        throw .notAvailableYet(feature: "the \(kind) output")
    }

    /// The H.264 encoder the output's branch reads and lets other outputs read too (a stream's), or
    /// nil. The compiler asks every output before describing any branch; `describeBranch` must read
    /// the same encoder. Pure, like `describeBranch`; nil also when the settings are invalid (the
    /// branch's description reports why).
    func offeredEncoder(_ context: BranchContext) -> SharedEncoder? { nil }

    /// What the output's branch needs outside the pipeline before it runs (a folder to write into).
    /// Called by the owner, before applying a graph in which the output has a branch; the place for
    /// side effects that `describeBranch` must not have.
    func prepareToRun() throws(CaptureError) {}

    /// The owner applied a graph with this output in it; `context` is what the output's branch was
    /// described with (nil: the output's connection is disabled). Called after every successful
    /// commit, whether or not the branch changed, on the owner's queue.
    func configurationApplied(_ context: BranchContext?) {}

    /// Called once the branch is live in a running pipeline.
    func attach(_ handle: BranchHandle) {
        handleState.value = handle
        let drawer = handle.element(Self.overlayElementName(name)).map { overlayCanvas.connect($0, shownTurned: overlayTurn) }
        overlayDrawer.value = drawer
    }

    /// The turn a viewer applies to what the branch's overlay element draws on (a movie's track
    /// matrix): the overlays are drawn upright as shown. None for outputs that turn their pixels.
    var overlayTurn: PixelTurn { .none }

    /// Called when the branch is about to leave the pipeline (or the pipeline stops). The overlays stop
    /// being drawn where the element outlives the branch (a shared encoder a recording still reads).
    func detach() {
        handleState.value = nil
        overlayDrawer.withLock { drawer in
            drawer?.hide(overlayCanvas)
            drawer = nil
        }
    }

    /// An element of this output's branch failed; the session stops after telling the output (a
    /// recording reports the failure in its result).
    func branchFailed(_ error: CaptureError) {}

    /// A video sink of this branch asks for a window to draw into (`prepare-window-handle`), on the
    /// thread that needs it: answered at once (`Element.setWindowHandle`) or not at all.
    func prepareWindow(_ sink: Element) {}

    /// An element of this branch asks for a context of `type` (`need-context`: waylandsink wants the
    /// application's Wayland display), on the thread that needs it: answered at once
    /// (`Element.setContext`) or not at all (the element then makes its own, or fails).
    func provideContext(_ type: String, to element: Element) {}

    /// Element messages posted by elements of this branch (zbar ...).
    func handleElementMessage(_ structure: Structure, from element: String) {}

    /// The device feeding this output dropped `count` frames before they reached the session (a gap in
    /// its frame sequence numbers). Posts one `frame-dropped` event (reason `driver`) per frame;
    /// outputs that only take frames on request (photos) override this to say nothing.
    func sourceDroppedFrames(_ count: Int) {
        guard let handle = handleState.value else { return }
        for _ in 0..<count { handle.post(.frameDropped(output: name, reason: .discontinuity)) }
    }
}

/// A weak reference to a session, Sendable.
struct WeakSession: Sendable {
    weak var session: CaptureSession?
    init(_ session: CaptureSession?) { self.session = session }
    var id: ObjectIdentifier? { session.map(ObjectIdentifier.init) }
}

/// What an attached output can reach of its running branch.
final class BranchHandle: Sendable {
    let bin: Bin
    let output: String
    /// The bins of the shared encoders the branch reads (an output's overlay element may be there).
    private let sharedEncoders: [Bin]
    private weak let engine: PipelineExecutor?

    init(bin: Bin, output: String, engine: PipelineExecutor, sharedEncoders: [Bin] = []) {
        self.bin = bin
        self.output = output
        self.engine = engine
        self.sharedEncoders = sharedEncoders
    }

    /// An element of the branch by its full name (`<output>_<role>`), or of a shared encoder it reads.
    func element(_ name: String) -> Element? {
        bin.child(named: name) ?? sharedEncoders.lazy.compactMap { $0.child(named: name) }.first
    }

    /// Posts a session event.
    func post(_ kind: SessionEvent.Kind) { engine?.post(kind) }

    /// The pipeline's running time now, in nanoseconds.
    var runningTime: UInt64? { engine?.pipeline.runningTime }
}
