import Capture
import CaptureControl
import Foundation

/// Setting up the declared session failed: which declaration, and the error.
public struct SessionSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Where the declaration is.
    public var location: SourceLocation?
    /// `input`, `output`, `overlay` or `session`.
    public var statement: String
    /// What Capture threw.
    public var error: CaptureError

    /// The declaration's line (when known), the statement and Capture's error: `line 3: output: ...`.
    public var description: String {
        (location.map { "line \($0.line): " } ?? "") + "\(statement): \(error.description)"
    }
}

/// Makes Capture objects from declarations: each `.pipeline` statement maps onto the public Capture API.
public struct SessionBuilder: Sendable {
    /// The document whose declarations are built.
    public var document: PipelineDocument
    /// Where relative output locations go (nil: the current directory, never next to the `.pipeline`
    /// file, which may be a shipped, read-only example).
    public var outputDirectory: String?
    /// Where relative input paths (overlay images, `file:` devices) are read from (nil: the `.pipeline`
    /// file's directory). Commands from remote callers read them from the output folder.
    public var inputDirectory: String?
    /// For a remote caller's command: the folders the files it names are checked against before
    /// anything opens them (a `file:` input is probed when it is made). Nil: a local caller.
    public var remote: SessionFolders?

    /// A builder for a document's declarations.
    public init(document: PipelineDocument, outputDirectory: String? = nil, inputDirectory: String? = nil) {
        self.document = document
        self.outputDirectory = outputDirectory
        self.inputDirectory = inputDirectory
    }

    /// The folder relative output locations go to (absolute): `outputDirectory`, else the current directory.
    public var outputFolder: String {
        let current = FileManager.default.currentDirectoryPath
        guard let outputDirectory else { return current }
        return outputDirectory.hasPrefix("/") ? outputDirectory : (current as NSString).appendingPathComponent(outputDirectory)
    }

    /// The `.pipeline` file's directory (absolute), or the current directory for a document without a file.
    public var documentDirectory: String {
        let current = FileManager.default.currentDirectoryPath
        guard let path = document.sourcePath else { return current }
        let directory = (path as NSString).deletingLastPathComponent
        if directory.isEmpty { return current }
        return directory.hasPrefix("/") ? directory : (current as NSString).appendingPathComponent(directory)
    }

    /// A `device=` spec with a relative `file:` path made absolute against the document's directory.
    public func resolvedDeviceSpec(_ spec: String) -> String {
        guard spec.hasPrefix("file:") else { return spec }
        let path = String(spec.dropFirst(5))
        return path.hasPrefix("/") ? spec : "file:" + ((inputFolder as NSString).appendingPathComponent(path) as NSString).standardizingPath
    }

    /// An output location made absolute: against `outputDirectory` when given, else the current directory.
    public func resolvedOutputLocation(_ location: String) -> String {
        if location.hasPrefix("/") { return location }
        return (outputFolder as NSString).appendingPathComponent(location)
    }

    private var inputFolder: String { inputDirectory ?? documentDirectory }

    /// `input` / `add-input`: `CaptureDeviceInput(device: CaptureDevice.resolve(device), name:, options:)`.
    /// `device=default` is the first camera, or `no-device-available` on a machine without one; a
    /// virtual device is used only where it is named. With `fallback=`, a device that cannot be used
    /// (none there, missing, busy, not allowed to be opened) is replaced by the fallback, and `note`
    /// says so and why (nil when the device itself is used).
    public func makeInput(_ declaration: InputDeclaration) throws(CaptureError) -> (input: CaptureDeviceInput, note: String?) {
        do {
            return (try makeInput(declaration, device: declaration.device), nil)
        } catch {
            guard let fallback = declaration.fallback, error.meansDeviceUnusable else { throw error }
            let input = try makeInput(declaration, device: fallback)
            return (input, "input '\(declaration.name)': \(error.name): \(Self.firstClause(of: error)); using the fallback '\(fallback)'")
        }
    }

    /// The first clause of an error's message (up to its first ';'), for a note that goes on after it.
    private static func firstClause(of error: CaptureError) -> String {
        String(error.description.prefix { $0 != ";" })
    }

    private func makeInput(_ declaration: InputDeclaration, device spec: String) throws(CaptureError) -> CaptureDeviceInput {
        let resolved = resolvedDeviceSpec(spec)
        if let remote, resolved.hasPrefix("file:") { try remote.checkRemote(path: String(resolved.dropFirst(5)), writing: false) }
        if remote != nil, resolved.hasPrefix("/") {
            // A device node by path: only a character device (a camera's /dev/videoN), never a file.
            var info = stat()
            guard stat(resolved, &info) == 0, info.st_mode & S_IFMT == S_IFCHR, !resolved.split(separator: "/").contains("..") else {
                throw .notPermitted(what: resolved, reason: "a remote command names a device by id or by its /dev node")
            }
        }
        let device = try CaptureDevice.resolve(resolved)
        if let media = declaration.media, device.mediaType != media {
            throw .deviceMediaMismatch(id: device.uniqueID, expected: media, actual: device.mediaType)
        }
        try CaptureDeviceInput.checkAccess(device)
        return try CaptureDeviceInput(device: device, name: declaration.name, options: declaration.options)
    }

    /// `output` / `add-output`: the output object of its kind, with its connection.
    /// Kinds Capture does not have yet throw `CaptureError.notAvailableYet`.
    public func makeOutput(_ declaration: OutputDeclaration) throws(CaptureError) -> CaptureOutput {
        let output: CaptureOutput
        switch declaration.settings {
        case .frames(let settings):
            if let location = settings.location {
                let sequence = CaptureImageSequenceOutput(name: declaration.name, location: resolvedOutputLocation(location), maxFrameRate: settings.maxRate)
                sequence.size = settings.size
                output = sequence
            } else {
                let frames = CaptureVideoDataOutput(name: declaration.name)
                frames.maxFrameRate = settings.maxRate
                frames.size = settings.size
                output = frames
            }
        case .preview(let settings):
            let preview = CaptureVideoPreviewOutput(name: declaration.name, sink: settings.sink ?? .auto)
            if let window = settings.window {
                // Drawing into a window of this display is the local user's choice, never a remote caller's.
                if remote != nil { throw .notPermitted(what: "window=", reason: "a remote command cannot draw into a window of this display") }
                try preview.setWindowHandle(window)
            }
            if let gravity = settings.gravity { preview.videoGravity = gravity }
            if let size = settings.size, settings.window == nil { preview.viewSize = size }
            output = preview
        case .photo(let settings):
            let photo = CapturePhotoOutput(name: declaration.name)
            var defaults = photo.defaults
            if let codec = settings.codec { defaults.codec = codec }
            if let quality = settings.quality { defaults.quality = quality }
            defaults.size = settings.size
            defaults.location = settings.location.map(resolvedOutputLocation)
            defaults.zeroShutterLag = settings.zeroShutterLag ?? false
            defaults.crop = settings.crop
            if settings.saveToLibrary == true { defaults.library = MediaLibrary.user() }
            defaults.overwritesExistingFile = settings.overwrite ?? false
            photo.defaults = defaults
            output = photo
        case .movie(let keys):
            var settings = MovieSettings()
            settings.location = keys.location.map(resolvedOutputLocation)
            settings.container = keys.container
            settings.videoCodec = keys.videoCodec
            settings.audioCodec = keys.audioCodec
            settings.bitRate = keys.bitrate
            settings.maxRecordedDuration = keys.maxDuration
            settings.maxRecordedFileSize = keys.maxFileSize
            settings.minFreeDiskSpaceLimit = keys.minFreeDiskSpace
            if let interval = keys.fragmentInterval { settings.movieFragmentInterval = interval }
            if keys.saveToLibrary == true { settings.library = MediaLibrary.user() }
            settings.overwritesExistingFile = keys.overwrite ?? false
            settings.preRoll = keys.preRoll
            if let encoder = keys.encoder { settings.encoder = encoder }
            output = CaptureMovieFileOutput(name: declaration.name, settings: settings)
        case .stream(let keys):
            var streamSettings = StreamSettings(bitRate: keys.bitrate, size: keys.size, audioCodec: keys.audioCodec)
            if let encoder = keys.encoder { streamSettings.encoder = encoder }
            let destination: StreamDestination = if let serve = keys.serve { try .serving(serve) } else { try .publishing(keys.publish ?? "") }
            output = CaptureStreamOutput(name: declaration.name, destination: destination, settings: streamSettings)
        case .metadata(let keys):
            let metadata = CaptureMetadataOutput(name: declaration.name)
            if let backend = keys.backend {
                try metadata.setBackend(backend)
            }
            if let types = keys.types { try metadata.setMetadataObjectTypes(named: types.map(\.rawValue)) }
            if let rect = keys.rectOfInterest { metadata.rectOfInterest = rect }
            if let delivery = keys.delivery { metadata.delivery = delivery }
            if let discard = keys.discardLateFrames { metadata.discardsLateFrames = discard }
            output = metadata
        }
        output.connection = declaration.connection
        return output
    }

    /// The outputs an overlay statement names: each by its name; `preview`, when no output has that
    /// name, means every preview output of the session. Empty `names` (in `set-overlay` and
    /// `remove-overlay`): every output that has an overlay named `overlay`.
    public func overlayTargets(_ names: [String], overlay: String, in session: CaptureSession) throws(CaptureError) -> [CaptureOutput] {
        try OverlayTargets.outputs(names, overlay: overlay, in: session)
    }

    /// `overlay` / `add-overlay`: the overlay added to each output it names (its image path made
    /// absolute against the document's directory, its text's placeholders filled). Checked first on
    /// every output, so a refusal leaves none of them with it.
    public func applyOverlay(
        _ declaration: OverlayDeclaration, to session: CaptureSession,
        placeholders: OverlayPlaceholders? = nil
    ) throws(CaptureError) {
        let targets = try overlayTargets(declaration.outputs, overlay: declaration.name, in: session)
        var fields = declaration.fields
        if let text = fields.text { fields.text = (placeholders ?? OverlayPlaceholders(session: session)).fill(text) }
        guard let overlay = fields.overlay(named: declaration.name, resolvingPath: resolvedInputPath) else {
            throw .invalidOverlay(overlay: declaration.name, key: "content", reason: "is missing: give text, clock, image or a shape")
        }
        try overlay.validate()
        for output in targets where output.overlays.contains(where: { $0.name == overlay.name }) {
            throw .invalidOverlay(overlay: overlay.name, key: "name", reason: "is already used by another overlay of \(output.description)")
        }
        for output in targets { try output.addOverlay(overlay) }
    }

    /// `set-overlay`: the keys given changed on the overlay of that name, on each output named (or
    /// every output that has it).
    public func changeOverlay(
        _ declaration: OverlayDeclaration, in session: CaptureSession,
        placeholders: OverlayPlaceholders? = nil
    ) throws(CaptureError) {
        let targets = try overlayTargets(declaration.outputs, overlay: declaration.name, in: session)
        var fields = declaration.fields
        if let text = fields.text { fields.text = (placeholders ?? OverlayPlaceholders(session: session)).fill(text) }
        for output in targets {
            guard let current = output.overlays.first(where: { $0.name == declaration.name }) else {
                throw .unknownOverlay(name: declaration.name, output: output.name)
            }
            try fields.applied(to: current, resolvingPath: resolvedInputPath).validate()
        }
        for output in targets {
            try output.updateOverlay(named: declaration.name) { overlay in overlay = fields.applied(to: overlay, resolvingPath: resolvedInputPath) }
        }
    }

    /// A path the document reads (an overlay's image) made absolute against its directory.
    public func resolvedInputPath(_ path: String) -> String {
        path.hasPrefix("/") ? path : ((inputFolder as NSString).appendingPathComponent(path) as NSString).standardizingPath
    }

    /// The declared session: inputs added, then the preset set, then outputs added and overlays applied,
    /// each through the public API so that a failure names the declaration it comes from.
    /// - Returns: the session and the notes to show (virtual devices standing in for missing ones).
    public func makeSession(name: String = "capture-session") throws(SessionSetupError) -> (session: CaptureSession, notes: [String]) {
        let session = CaptureSession(name: name)
        var notes: [String] = []
        for declaration in document.inputs {
            do {
                let (input, note) = try makeInput(declaration)
                if let note { notes.append(note) }
                try session.addInput(input)
            } catch {
                throw SessionSetupError(location: declaration.location, statement: "input", error: error)
            }
        }
        if let preset = document.session.preset {
            do {
                let chosen = try session.setSessionPreset(preset, fallbacks: document.session.fallbackPreset.map { [$0] } ?? [])
                if chosen != preset { notes.append("the inputs cannot serve preset \(preset.rawValue): using fallback-preset \(chosen.rawValue)") }
            } catch {
                throw SessionSetupError(location: document.session.location, statement: "session", error: error)
            }
        }
        for declaration in document.outputs {
            do { try session.addOutput(makeOutput(declaration)) } catch {
                throw SessionSetupError(location: declaration.location, statement: "output", error: error)
            }
        }
        // A metadata output's highlight= names outputs declared anywhere in the file (`preview` also
        // means the preview outputs): resolved once every output is in.
        for declaration in document.outputs {
            guard case .metadata(let keys) = declaration.settings, let highlight = keys.highlight,
                let metadata = session.output(named: declaration.name) as? CaptureMetadataOutput
            else { continue }
            do { metadata.highlightOutputs = try overlayTargets(highlight, overlay: metadata.highlightOverlayName, in: session).map(\.name) } catch {
                throw SessionSetupError(location: declaration.location, statement: "output", error: error)
            }
        }
        let placeholders = OverlayPlaceholders(session: session)
        for overlay in document.overlays {
            do { try applyOverlay(overlay, to: session, placeholders: placeholders) } catch {
                throw SessionSetupError(location: overlay.location, statement: "overlay", error: error)
            }
        }
        return (session, notes)
    }
}
