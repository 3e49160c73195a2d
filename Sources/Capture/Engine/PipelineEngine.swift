/// What the session's owner needs of whatever runs its graph: the seam between `CaptureSession` and
/// `PipelineExecutor`, like swift-nio's `EmbeddedChannel` under a channel pipeline. Production runs
/// the executor (GStreamer); the owner's table tests run a recorder that needs no pipeline.
///
/// `start`, `apply` and `stop` are called by the owner's command queue only, one at a time. What the
/// engine sees that the owner must act on (a device gone, a branch that failed) comes back as
/// `EngineIncident`s, through the callback the engine was made with (`EngineParameters.incident`).
protocol PipelineEngine: AnyObject, Sendable {
    /// Builds the whole graph and brings it to playing; returns when it plays.
    func start(_ graph: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError)
    /// Applies the edits (`EditPlanner.plan(running: current, target:)`) that turn what runs into
    /// `target`, keeping everything that does not change flowing; returns what changed.
    func apply(_ target: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError) -> ConfigurationReport
    /// Finishes files, then stops and releases everything.
    func stop() async
    /// The compiled graph that runs now.
    var current: CompiledGraph { get }
    /// Device formats of the running inputs (what a compilation against the running graph keeps).
    var runningFormats: [String: ResolvedFormat] { get }
    /// The factory names of every element that runs (diagnostics and tests).
    var elementFactoryNames: [String] { get }
}

/// What the owner makes an engine with.
struct EngineParameters: Sendable {
    /// The pipeline's name in GStreamer's debug output.
    var name: String
    /// How long starting waits for the pipeline to play.
    var stateTimeout: Duration
    /// How long a draining branch may go without a frame moving through it, and how long in all.
    var drainTimeout: Duration
    var drainLimit: Duration
    /// The owner's clock (its timeouts and polling): an engine that waits may wait on it.
    var clock: any Clock<Duration>
    /// Posts a session event.
    var post: @Sendable (SessionEvent.Kind) -> Void
    /// Delivers an incident to the owner.
    var incident: @Sendable (EngineIncident) -> Void
}

/// Makes the engine of one run of a session (each `startRunning` makes a new one).
typealias EngineFactory = @Sendable (EngineParameters) throws(CaptureError) -> any PipelineEngine

extension PipelineExecutor: PipelineEngine {
    var elementFactoryNames: [String] { pipeline.elementFactoryNames }

    /// The production engine: a GStreamer pipeline.
    static let factory: EngineFactory = { parameters throws(CaptureError) in
        try PipelineExecutor(
            name: parameters.name, stateTimeout: parameters.stateTimeout, drainTimeout: parameters.drainTimeout,
            drainLimit: parameters.drainLimit, post: parameters.post, incident: parameters.incident)
    }
}
