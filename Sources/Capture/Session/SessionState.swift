/// Where a session is in its life: one value, so that no combination the owner never means can be
/// represented (an engine without a running session, a wait for a device on a running one).
enum Lifecycle {
    /// Not running, nothing interrupted.
    case idle
    /// Running on `engine`.
    case running(any PipelineEngine)
    /// An input's device failed or went (`device`, its id). While `engine` is there the session still
    /// runs and is being stopped; `reconnection` is the wait for the device of a reconnecting input.
    /// Ends when the session starts again, or when the device comes back.
    case interrupted(device: String, engine: (any PipelineEngine)?, reconnection: Task<Void, Never>?)

    /// The engine of a running session.
    var engine: (any PipelineEngine)? {
        switch self {
        case .idle: nil
        case .running(let engine): engine
        case .interrupted(_, let engine, _): engine
        }
    }

    var isRunning: Bool { engine != nil }

    /// The device whose failure interrupted the session.
    var interruptedDevice: String? {
        if case .interrupted(let device, _, _) = self { return device }
        return nil
    }

    /// The wait for a reconnecting input's device.
    var reconnection: Task<Void, Never>? {
        if case .interrupted(_, _, let reconnection) = self { return reconnection }
        return nil
    }

    /// The same interruption with another wait for the device (none: the wait ended); nothing else
    /// changes.
    func waiting(_ task: Task<Void, Never>?) -> Lifecycle {
        guard case .interrupted(let device, let engine, _) = self else { return self }
        return .interrupted(device: device, engine: engine, reconnection: task)
    }

    /// Without its engine: the session stopped. An interruption stays (it ends at the next start or
    /// when its device comes back).
    var stopped: Lifecycle {
        guard case .interrupted(let device, _, let reconnection) = self else { return .idle }
        return .interrupted(device: device, engine: nil, reconnection: reconnection)
    }
}

/// What an apply of the engine made run, for the owner's books (`OwnerState.record`).
enum AppliedChange {
    /// A configuration was applied: its compilation runs.
    case configuration(SessionConfiguration, Compilation)
    /// A recording's branch joined the running graph (`graph`), described with `context`.
    case recordingStarted(output: String, RecordingRequest, context: BranchContext, graph: CompiledGraph)
    /// A recording's branch left: `graph` runs (nil: the session was not running, nothing was applied).
    case recordingStopped(output: String, graph: CompiledGraph?)
    /// A failed apply: the graph that ran before goes back, without the recordings that ended.
    case rollBack
    /// The session stopped: nothing runs, no recording goes on.
    case stopped
}

/// The owner's state, behind its one lock.
struct OwnerState {
    /// The configuration as the user set it.
    var committed = SessionConfiguration()
    /// What the running pipeline was last built from (rolled back to when a live edit fails).
    var applied = SessionConfiguration()
    /// The graph that runs (what a failed edit goes back to), and the context each output's branch
    /// in it was described with (what a recording command describes a movie branch from).
    var appliedGraph: CompiledGraph?
    var appliedContexts: [String: BranchContext] = [:]
    /// Counts changes of `committed`: a failed apply puts `committed` back only when no later
    /// change is queued behind it.
    var commitSerial = 0
    /// Identifies the running engine: incidents of an earlier one (delivered late, after a stop
    /// and a new start) are dropped.
    var engineID = 0
    /// The recordings of movie outputs, by output name: the owner's runtime state, compiled into
    /// each movie output's context.
    var recordings: [String: RecordingRequest] = [:]
    /// Counts what changed the running graph (commits, recordings): a compilation made before a
    /// change is made again.
    var generation = 0
    var pending: SessionConfiguration?
    /// The pending configuration as each open configuration block found it, outermost first: what
    /// `cancelConfiguration()` goes back to.
    var blockStarts: [SessionConfiguration] = []
    /// How deep configuration blocks are open.
    var depth: Int { blockStarts.count }
    var lifecycle = Lifecycle.idle
    weak var delegate: CaptureSessionDelegate?

    /// The engine of the running session.
    var engine: (any PipelineEngine)? { lifecycle.engine }

    /// The sources of the running graph (none when the session is not running).
    var streamingSources: [SourceSegment] { engine == nil ? [] : appliedGraph?.sources ?? [] }

    /// The one place the owner's books follow an apply: the graph that runs, the contexts of its
    /// branches, the recordings and the generation. A recording command changes its own recording
    /// alone; a roll-back forgets the recordings that ended (their branches do not come back), a stop
    /// all of them. After a commit, a recording keeps the branch it was first applied
    /// with, and one whose branch is not in the graph (its output left, its connection was disabled, an
    /// input it reads went) or that ended is forgotten. Returns what runs after the change (what a
    /// roll-back applies again).
    @discardableResult
    mutating func record(_ change: AppliedChange) -> (configuration: SessionConfiguration, graph: CompiledGraph?) {
        switch change {
        case .configuration(let configuration, let compilation):
            applied = configuration
            appliedGraph = compilation.graph
            appliedContexts = compilation.contexts
            keepRecordingsThatRun()
        case .recordingStarted(let output, let request, let context, let graph):
            recordings[output] = request
            appliedGraph = graph
            appliedContexts[output] = context
        case .recordingStopped(let output, let graph):
            recordings[output] = nil
            guard let graph else { return (applied, appliedGraph) }
            appliedGraph = graph
            appliedContexts[output]?.recording = nil
        case .rollBack:
            let ended = recordings.filter { $0.value.recording.hasEnded }.map(\.key)
            appliedGraph?.branches.removeAll { ended.contains($0.output) }
            if let branches = appliedGraph?.branches { appliedGraph?.branches = GraphCompiler.withSharedEncoders(branches) }
            for name in ended { recordings[name] = nil }
        case .stopped:
            appliedGraph = nil
            recordings.removeAll()
        }
        generation += 1
        return (applied, appliedGraph)
    }

    /// Forgets the recordings that ended or whose branch is not in the graph that runs; the others
    /// keep their branch as it runs (the one first applied, reading the inputs that replaced its own).
    private mutating func keepRecordingsThatRun() {
        let graph = appliedGraph
        recordings = recordings.reduce(into: [:]) { kept, entry in
            guard let branch = graph?.branches.first(where: { $0.output == entry.key }), !entry.value.recording.hasEnded else { return }
            kept[entry.key] = RecordingRequest(recording: entry.value.recording, branch: branch)
        }
    }
}
