import Foundation

/// A session's configuration as a value: what `commitConfiguration` validates and compiles.
struct SessionConfiguration: Sendable {
    var preset: SessionPreset = .high
    var inputs: [CaptureDeviceInput] = []
    var outputs: [CaptureOutput] = []
}

/// A recording the owner runs for a movie output: the runtime object its probes report to, and the
/// branch it records with once applied (kept for the recording's whole length: later configuration
/// changes apply to the next recording, never mid-file).
struct RecordingRequest: Sendable {
    let recording: MovieRecording
    var branch: BranchSegment?
}

/// What one compilation gives: the graph, and the context each output's branch was described with
/// (handed to the outputs once the graph runs).
struct Compilation: Sendable {
    var graph: CompiledGraph
    var contexts: [String: BranchContext]
    /// The running device formats it was compiled against.
    var runningFormats: [String: ResolvedFormat]
}

/// Compiles a session configuration into GStreamer terms: one source segment and tee per input,
/// one branch per output.
enum GraphCompiler {
    /// - Parameter running: the device formats of inputs that are streaming now. An input keeps its
    ///   running format whenever that format can still serve the new configuration by scaling on the
    ///   branch side, so the camera is not restarted.
    /// - Parameter assumingRecording: compile as if every idle movie output were recording to its
    ///   settings' location (what `capture compile` shows); nothing is written or reserved.
    /// - Parameter recordings: the recordings the owner runs, by output name (their snapshot is part of
    ///   each movie output's context).
    ///
    /// - Parameter streaming: the sources that run now. An input among them that leaves while a new
    ///   one of the same media comes is a swap (paired like the planner pairs them): outputs are told
    ///   which input replaces which, so a recording goes on reading the new one.
    ///
    /// - Parameter environment: the encoder choice and device controllability to compile against,
    ///   gathered by the caller before it takes a lock (`CompileEnvironment.current`).
    ///
    /// Every output is described even after another failed, so that all errors are reported at once;
    /// describing is pure, so nothing is left configured for a graph that never runs.
    static func compile(
        _ configuration: SessionConfiguration, environment: CompileEnvironment, recordings: [String: RecordingRequest] = [:],
        running: [String: ResolvedFormat] = [:], streaming: [SourceSegment] = [], assumingRecording: Bool = false
    ) throws(CaptureError) -> Compilation {
        var errors: [CaptureError] = []
        var sources: [SourceSegment] = []
        var names = Set<String>()
        for input in configuration.inputs {
            if !names.insert(input.name).inserted { errors.append(.duplicateName(kind: "input", name: input.name)) }
            do {
                sources.append(
                    try sourceSegment(
                        for: input, preset: configuration.preset, running: running[input.name],
                        controllable: environment.isControllable(input.device)))
            } catch {
                errors.append(error)
            }
        }
        let streamingNames = Set(streaming.map(\.input)), newNames = Set(sources.map(\.input))
        let swaps = EditPlanner.pairSwaps(
            leaving: streaming.filter { !newNames.contains($0.input) },
            coming: sources.filter { !streamingNames.contains($0.input) })
        let replaced = Dictionary(swaps.map { ($0.from, $0.to.input) }, uniquingKeysWith: { first, _ in first })
        var branches: [BranchSegment] = []
        var contexts: [String: BranchContext] = [:]
        var described: [(CaptureOutput, BranchContext)] = []
        for output in configuration.outputs {
            if !names.insert(output.name).inserted { errors.append(.duplicateName(kind: "output", name: output.name)); continue }
            let connection = output.connection
            let video: SourceSegment?
            if let wanted = connection.input {
                guard let found = sources.first(where: { $0.input == wanted }) else {
                    if !configuration.inputs.contains(where: { $0.name == wanted }) { errors.append(.unknownInput(name: wanted)) }
                    continue
                }
                guard found.media == .video else {
                    errors.append(.invalidConfiguration(object: output.description, reason: "its input '\(wanted)' is not a video input"))
                    continue
                }
                video = found
            } else {
                video = sources.first { $0.media == .video }
            }
            if ![0, 90, 180, 270].contains(connection.rotation) {
                errors.append(.invalidConfiguration(object: output.description, reason: "rotation must be 0, 90, 180 or 270, not \(connection.rotation)"))
                continue
            }
            guard connection.isEnabled else { continue }
            let context = BranchContext(
                output: output.name, videoInput: video, audioInputs: sources.filter { $0.media == .audio },
                connection: connection, recording: recordings[output.name], assumesRecording: assumingRecording,
                replacedInputs: replaced, environment: environment)
            described.append((output, context))
        }
        // The encoders outputs offer to share (a stream's), so that a recording of the same picture
        // reads one instead of encoding it again.
        let offers = described.compactMap { output, context in output.offeredEncoder(context) }
        for (output, context) in described {
            var context = context
            context.sharedEncoders = offers
            contexts[output.name] = context
            do {
                if let branch = try output.describeBranch(context) { branches.append(branch) }
            } catch {
                errors.append(error)
            }
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 { throw .configurationRejected(errors: errors) }
        return Compilation(graph: CompiledGraph(sources: sources, branches: withSharedEncoders(branches)), contexts: contexts, runningFormats: running)
    }

    /// The branches, after the branch of each shared encoder one of them reads (once, before its
    /// first reader). An encoder is in the graph exactly while a branch reads it. Encoder branches
    /// among `branches` are made again (a graph edited by a recording's start or end goes through here).
    static func withSharedEncoders(_ graphBranches: [BranchSegment]) -> [BranchSegment] {
        var branches = graphBranches.filter { !$0.providesInput }
        var encoders: [SharedEncoder] = []
        // Two encodes under one name (a stream whose camera changed while a recording reads the
        // encoder it had): the recording keeps the name it runs with (file-writing readers first), the
        // other gets a name of its own.
        let order = branches.indices.filter { branches[$0].writesFile } + branches.indices.filter { !branches[$0].writesFile }
        for index in order {
            for encoder in branches[index].reads {
                guard let same = encoders.first(where: { $0.name == encoder.name }) else {
                    encoders.append(encoder)
                    continue
                }
                guard same != encoder else { continue }
                let own = encoder.named(encoder.name + "_" + SharedEncoder.digest([encoder.input]))
                branches[index].reads = branches[index].reads.map { $0 == encoder ? own : $0 }
                for chain in branches[index].chains.indices where branches[index].chains[chain].input == encoder.name {
                    branches[index].chains[chain].input = own.name
                }
                if !encoders.contains(own) { encoders.append(own) }
            }
        }
        guard !encoders.isEmpty else { return branches }
        let shared = encoders.map { encoder in
            encoder.branch(forFiles: branches.contains { branch in branch.writesFile && branch.reads.contains { $0.name == encoder.name } })
        }
        return shared + branches
    }

    /// Names must be usable as GStreamer element names and in gst-launch syntax.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, CharacterSet.letters.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-" }
    }

    /// `controllable`: the device's controls act in the session (`CompileEnvironment.isControllable`).
    static func sourceSegment(
        for input: CaptureDeviceInput, preset: SessionPreset, running: ResolvedFormat?, controllable: Bool
    ) throws(CaptureError) -> SourceSegment {
        let device = input.device
        let name = input.name
        guard isValidName(name) else {
            throw .invalidConfiguration(
                object: input.description, reason: "the name '\(name)' must start with a letter and hold only letters, digits, '-' and '_'")
        }
        var elements: [ElementSpec] = []
        var format: ResolvedFormat?
        if device.mediaType == .video {
            var resolved = try FormatSelector.resolve(
                preset: preset, formats: device.formats, inputName: name,
                requestedSize: input.options.size, requestedRate: input.options.frameRate)
            // Keep the running device format when it can still serve the new output size by scaling.
            if let running, preset != .photo, preset != .inputPriority, let runningSize = running.device.size,
                runningSize.covers(resolved.outputSize), device.formats.contains(running.device)
            {
                resolved = ResolvedFormat(device: running.device, frameRate: running.frameRate, outputSize: resolved.outputSize)
            }
            format = resolved
        }
        switch device.kind {
        case .testPattern:
            guard let format else { throw .deviceMediaMismatch(id: device.uniqueID, expected: .video, actual: device.mediaType) }
            elements.append(ElementSpec("videotestsrc", name: "\(name)_source", [("is-live", "true"), ("pattern", input.options.pattern ?? "smpte")]))
            elements.append(ElementSpec("capsfilter", name: "\(name)_format", [("caps", deviceCaps(format))]))
        case .testTone:
            elements.append(ElementSpec("audiotestsrc", name: "\(name)_source", [("is-live", "true"), ("wave", "sine"), ("freq", "440"), ("volume", "0.3")]))
            elements.append(ElementSpec("capsfilter", name: "\(name)_format", [("caps", "audio/x-raw,rate=48000,channels=2")]))
        case .file(let path):
            elements.append(ElementSpec("filesrc", name: "\(name)_source", [("location", path)]))
            elements.append(ElementSpec("decodebin", name: "\(name)_decode", [("caps", device.mediaType == .video ? "video/x-raw" : "audio/x-raw")]))
            elements.append(ElementSpec(device.mediaType == .video ? "videoconvert" : "audioconvert", name: "\(name)_convert"))
            // Paces the decoded frames on the pipeline clock: the file plays like a live camera.
            elements.append(ElementSpec("identity", name: "\(name)_clock", [("sync", "true")]))
        case .system(let factory, let properties):
            elements.append(ElementSpec(factory, name: "\(name)_source", properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
            if let format {
                elements.append(ElementSpec("capsfilter", name: "\(name)_format", [("caps", deviceCaps(format))]))
                if format.device.mediaSubtype == "image/jpeg" {
                    elements.append(ElementSpec("jpegdec", name: "\(name)_decode"))
                }
            }
        }
        if controllable { elements += controlStages(for: input, format: format) }
        if let frames = input.options.failAfterFrames {
            guard device.isVirtual else {
                throw .invalidConfiguration(object: input.description, reason: "fail-after is a fault injection of the virtual devices only")
            }
            elements.append(ElementSpec("identity", name: "\(name)_fault", [("error-after", "\(frames)")]))
        }
        var isLive = true
        if case .file = device.kind { isLive = false }
        return SourceSegment(
            input: name, media: device.mediaType, device: device.uniqueID, elements: elements, format: format,
            captureDevice: device, isLive: isLive)
    }

    /// The stages device controls act on, after the device's format (and decoder): for the test
    /// pattern, a `videobalance` and a white-balance cast that simulate its controls; for it and every
    /// camera, the zoom (a crop of the centre scaled back to the format's size, pinned by a capsfilter,
    /// so that a zoom change never changes the caps the session's branches see). Their values are set
    /// on the running elements (`SourceTap`), not here: a control change does not restart the source.
    /// The filters do not act on QoS: one late branch must not make the source drop frames for all.
    /// Only for a device the session controls (the caller asks `CompileEnvironment.isControllable`).
    static func controlStages(for input: CaptureDeviceInput, format: ResolvedFormat?) -> [ElementSpec] {
        guard let size = format?.device.size else { return [] }
        var stages: [ElementSpec] = []
        let name = input.name
        if case .testPattern = input.device.kind {
            stages.append(ElementSpec("videobalance", name: SourceStages.balance(name), [("qos", "false")]))
            stages.append(ElementSpec("identity", name: SourceStages.whiteBalance(name)))
        }
        stages.append(ElementSpec("videocrop", name: SourceStages.zoom(name), [("qos", "false")]))
        stages.append(ElementSpec("videoscale", name: SourceStages.zoomScale(name), [("qos", "false"), ("add-borders", "false")]))
        stages.append(
            ElementSpec(
                "capsfilter", name: SourceStages.zoomSize(name),
                [("caps", "video/x-raw,width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1")]))
        return stages
    }

    /// The caps a device is opened with: its media type, pixel format, size and frame rate.
    static func deviceCaps(_ format: ResolvedFormat) -> String {
        var caps = format.device.mediaSubtype
        if let pixel = format.device.pixelFormat { caps += ",format=\(pixel)" }
        if let size = format.device.size { caps += ",width=\(size.width),height=\(size.height)" }
        caps += ",framerate=\(format.frameRate.caps)"
        return caps
    }
}
