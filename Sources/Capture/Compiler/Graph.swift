/// One GStreamer element of a compiled session: its factory, its unique name and its properties in
/// their gst-launch string form. The same value renders the `gst-launch-1.0` line and builds the
/// running pipeline, so the two cannot disagree.
public struct ElementSpec: Hashable, Sendable {
    /// The GStreamer element factory (`v4l2src`, `videoconvert`, `jpegenc` ...).
    public var factory: String
    /// The element's name in the pipeline, unique in the session.
    public var name: String
    /// Properties that shape the element; a change rebuilds it.
    public var properties: [Property]
    /// Properties that may change on a running pipeline (a capsfilter's caps, a rate limit ...);
    /// a change is applied in place.
    public var liveProperties: [Property]

    /// A property and its value in gst-launch string form.
    public struct Property: Hashable, Sendable {
        /// The property's name (`device`, `caps` ...).
        public var name: String
        /// The value as gst-launch writes it, unquoted.
        public var value: String
        /// The property `name` with `value`.
        public init(_ name: String, _ value: String) { self.name = name; self.value = value }
    }

    /// An element of `factory` named `name`.
    /// - Parameters:
    ///   - factory: The GStreamer factory name (`videoconvert`).
    ///   - name: The element's name, unique in the session's pipeline.
    ///   - properties: Properties that shape the element, as name and value pairs.
    ///   - live: Properties that may change while the pipeline runs.
    public init(_ factory: String, name: String, _ properties: [(String, String)] = [], live: [(String, String)] = []) {
        self.factory = factory
        self.name = name
        self.properties = properties.map { Property($0.0, $0.1) }
        self.liveProperties = live.map { Property($0.0, $0.1) }
    }

    /// A capsfilter whose caps may be changed while running.
    public static func capsFilter(name: String, caps: String) -> ElementSpec {
        ElementSpec("capsfilter", name: name, live: [("caps", caps)])
    }

    /// The element as gst-launch syntax: `factory name=N key=value ...`.
    public var launchText: String {
        ([factory, "name=\(name)"] + (properties + liveProperties).map { "\($0.name)=\(Self.quote($0.value))" })
            .joined(separator: " ")
    }

    /// The element without its live properties (what decides whether it must be rebuilt).
    var structural: ElementSpec {
        var copy = self
        copy.liveProperties = []
        return copy
    }

    /// Quotes a property value for gst-launch when it holds spaces or specials.
    static func quote(_ value: String) -> String {
        let plain = value.allSatisfy { $0.isLetter || $0.isNumber || "-_./:+%@".contains($0) }
        if plain && !value.isEmpty { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }
}

/// A linear run of elements inside a branch: fed by an input's tee (or by nothing), ending in its last
/// element or linked into a named element of the same branch (e.g. a muxer).
public struct Chain: Hashable, Sendable {
    /// The input whose tee feeds this chain; nil for a chain that starts at its own first element.
    public var input: String?
    /// The elements of the chain, linked in order.
    public var elements: [ElementSpec]
    /// The element (by name, in the same branch) the chain's last element links into.
    public var into: String?
    /// The element (by name, in the same branch: a tee) the chain's first element is fed from.
    public var from: String?

    /// A chain of `elements`, fed by the tee of `input` (or by the element `from`), and linked `into` an element of the branch when given.
    public init(input: String?, elements: [ElementSpec], into: String? = nil, from: String? = nil) {
        self.input = input
        self.elements = elements
        self.into = into
        self.from = from
    }

    var launchText: String {
        var text = elements.map(\.launchText).joined(separator: " ! ")
        if let from { text = "\(from). ! " + text }
        if let into { text += " ! \(into)." }
        return text
    }
}

/// The source side of one input: device element, format caps and whatever the device needs to reach
/// raw media. Its last element feeds the input's tee.
public struct SourceSegment: Hashable, Sendable {
    /// The name of the input the segment captures for.
    public var input: String
    /// Whether the input captures video or audio.
    public var media: MediaType
    /// The unique ID of the input's device.
    public var device: String
    /// The source element, the format caps and the elements that bring the device's media to raw media, in order.
    public var elements: [ElementSpec]
    /// The device format chosen for a video input.
    public var format: ResolvedFormat?
    /// The device itself (outputs read its name, properties and controls from it).
    public var captureDevice: CaptureDevice?
    /// False for a `file:` source: it starts at time zero and must be shifted onto a running timeline.
    public var isLive: Bool = true

    /// The name of the input's tee (`INPUT_tee`), which the outputs' branches are fed from.
    public var teeName: String { "\(input)_tee" }

    /// True when the source must not see RECONFIGURE events: pipewiresrc answers one (a tee sends it
    /// upstream whenever a branch joins or leaves) by disconnecting and reconnecting its stream and
    /// resetting its clock, so the frames stop for a moment and their timestamps jump. Its device format
    /// is fixed by the segment's capsfilter, so there is nothing to negotiate again.
    var dropsReconfigure: Bool { elements.first?.factory == PipeWireCamera.factory }

    /// True when the source's buffers are a driver's frames: each carries the driver's frame sequence
    /// number (its offset) and the time the driver captured it (its timestamp, on the running time).
    /// v4l2src, and pipewiresrc (from PipeWire's buffer header: the V4L2 driver's, for a V4L2 node).
    var deliversDriverFrames: Bool { ["v4l2src", PipeWireCamera.factory].contains(elements.first?.factory) }

    var tee: ElementSpec { ElementSpec("tee", name: teeName, [("allow-not-linked", "true")]) }
    var launchText: String { elements.map(\.launchText).joined(separator: " ! ") }
}

/// The branch of one output: its chains (one per input it consumes).
public struct BranchSegment: Hashable, Sendable {
    /// The name of the output the branch belongs to.
    public var output: String
    /// The output kind ("frames", "preview", "photo", "movie", "metadata").
    public var kind: String
    /// The branch's chains: one per input it reads, and any inside it (into a muxer ...).
    public var chains: [Chain]
    /// True when the branch writes a file: removing it sends EOS through it first and waits for the
    /// file to be finished.
    public var writesFile: Bool
    /// True when removing the branch must first let the frames queued in it through (EOS through it,
    /// waited for as a file's): a metadata output that decodes every frame. Implied by `writesFile`.
    public var drainsOnRemoval = false
    /// The branch is drained before it is removed (`writesFile` or `drainsOnRemoval`).
    public var drains: Bool { writesFile || drainsOnRemoval }
    /// Elements the output uses outside the branch (a photo output's encoder pipeline), so that
    /// `capture validate` can check they are installed.
    public var auxiliaryFactories: [String]
    /// True for a branch other branches read (a `SharedEncoder`): its last element feeds a tee in the
    /// pipeline, `OUTPUT_tee`, and chains name the branch as their input.
    public var providesInput = false
    /// The shared encoders the branch reads; the compiler puts their branches in the graph before it.
    public var reads: [SharedEncoder] = []
    /// True for a branch that shows or hands over every frame (previews, web previews, frames
    /// outputs): each frame its leaky head queue drops is reported as `frame-dropped` (late).
    public var reportsLateFrames = false

    /// A branch of `output` made of `chains`.
    /// - Parameters:
    ///   - output: The output's name.
    ///   - kind: The output kind ("frames", "preview", "photo", "movie", "metadata").
    ///   - writesFile: True when removing the branch must first finish its file.
    ///   - chains: The branch's chains, one per input it reads (video, and audio for a movie).
    ///   - auxiliaryFactories: Elements the output uses outside the branch.
    ///   - reportsLateFrames: True when the frames its leaky head queue drops are reported.
    public init(
        output: String, kind: String, chains: [Chain], writesFile: Bool = false, auxiliaryFactories: [String] = [], reportsLateFrames: Bool = false
    ) {
        self.reportsLateFrames = reportsLateFrames
        self.output = output
        self.kind = kind
        self.chains = chains
        self.writesFile = writesFile
        self.auxiliaryFactories = auxiliaryFactories
    }

    /// The names of the inputs the branch reads.
    public var inputs: [String] { chains.compactMap(\.input) }

    /// The same branch reading other inputs (`renamed[old] = new`): what a branch becomes when the
    /// input it reads is replaced by another of the same media in one configuration block.
    func reading(_ renamed: [String: String]) -> BranchSegment {
        guard !renamed.isEmpty else { return self }
        var copy = self
        for index in copy.chains.indices { copy.chains[index].input = copy.chains[index].input.map { renamed[$0] ?? $0 } }
        copy.reads = reads.map { $0.reading(renamed) }
        return copy
    }
    var allElements: [ElementSpec] { chains.flatMap(\.elements) }

    /// True when `other` differs from this branch only in live properties.
    func sameStructure(as other: BranchSegment) -> Bool {
        var left = self, right = other
        for index in left.chains.indices { left.chains[index].elements = left.chains[index].elements.map(\.structural) }
        for index in right.chains.indices { right.chains[index].elements = right.chains[index].elements.map(\.structural) }
        return left == right
    }

    /// The element in the chain fed by an input (the one its ghost pad targets).
    func entryElement(for input: String) -> String? {
        chains.first { $0.input == input }?.elements.first?.name
    }
}

/// A whole session compiled to GStreamer terms.
public struct CompiledGraph: Hashable, Sendable {
    /// The source segment of each input.
    public var sources: [SourceSegment]
    /// The branch of each output.
    public var branches: [BranchSegment]

    /// A graph of `sources` and `branches`.
    public init(sources: [SourceSegment], branches: [BranchSegment]) {
        self.sources = sources
        self.branches = branches
    }

    /// Every element factory the session needs (for `capture validate`).
    public var requiredFactories: [String] {
        var all: [String] = sources.flatMap { $0.elements.map(\.factory) + ["tee"] }
        for branch in branches {
            all += branch.allElements.map(\.factory) + branch.auxiliaryFactories
            if branch.providesInput { all.append("tee") }
        }
        var seen = Set<String>()
        return all.filter { seen.insert($0).inserted }
    }

    /// The pipeline in gst-launch syntax, one string.
    public var launchDescription: String {
        var parts: [String] = []
        for source in sources {
            parts.append(source.launchText + " ! " + source.tee.launchText)
        }
        let provided = Set(branches.filter(\.providesInput).map(\.output))
        for branch in branches {
            for chain in branch.chains {
                var text = chain.launchText
                if branch.providesInput { text += " ! tee name=\(branch.output)_tee allow-not-linked=true" }
                if let input = chain.input, let source = sources.first(where: { $0.input == input }) {
                    parts.append("\(source.teeName). ! " + text)
                } else if let input = chain.input, provided.contains(input) {
                    parts.append("\(input)_tee. ! " + text)
                } else {
                    parts.append(text)
                }
            }
        }
        return parts.joined(separator: "  ")
    }

    /// A shell command line that runs the same pipeline with gst-launch-1.0 (`-e` so that files are
    /// finalized on Ctrl-C).
    public var gstLaunchCommand: String {
        "gst-launch-1.0 -e " + Self.shellTokens(launchDescription).joined(separator: " ")
    }

    /// Splits a launch description into shell-safe tokens (quoted where the shell would interfere).
    static func shellTokens(_ description: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in description {
            if escaped { current.append(character); escaped = false; continue }
            if character == "\\" { current.append(character); escaped = true; continue }
            if character == "\"" { inQuotes.toggle() }
            if character == " " && !inQuotes {
                if !current.isEmpty { tokens.append(current); current = "" }
                continue
            }
            current.append(character)
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens.map { token in
            let safe = token.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=,+%@!".contains($0) }
            return safe ? token : "'" + token.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
    }
}
