import Capture
import Foundation

/// The one place every control surface acts on a session through: a `.pipeline` scenario, the
/// terminal's keys, `capture serve`'s HTTP API, the MQTT command topic and a Swift app send it
/// `ControlCommand`s and get typed results (`ControlResult`) or a `CaptureError`.
///
/// It holds the state a camera app's controls have beside the session — the flash mode the flash
/// button chose, the last recording of each movie output, the overlay texts that show the session's
/// state (`{flash-mode}`, `{camera}`, `{recording}`) — and reads the live session, never a file's
/// declarations. Commands from a remote caller are confined by the session's `SessionFolders`
/// (`RemoteAccess`): the policy is applied here, once, not by each surface.
///
/// ```swift
/// let controller = SessionController(session: session, folders: SessionFolders(outputFolder: "out"))
/// if case .photos(let photos) = try await controller.perform(.takePhoto(PhotoRequest())) {
///     print(photos[0].location ?? "")
/// }
/// ```
public final class SessionController: Sendable {
    /// What video mode adds to the session.
    public struct VideoMode: Sendable, Hashable {
        /// The movie output's name.
        public var movieName: String
        /// Where it records, relative to the output folder (a `%d` pattern takes the next free number).
        public var movieLocation: String
        /// A microphone added with the movie output when the session has no audio input (a device
        /// spec, as `CaptureDevice.resolve` takes it; nil: none).
        public var microphone: String?
        /// The microphone input's name.
        public var microphoneName: String

        /// Video mode's outputs; by default `mode-movie` recording `VID_0001.mp4` ... without a microphone.
        public init(
            movieName: String = "mode-movie", movieLocation: String = "VID_%04d.mp4", microphone: String? = nil, microphoneName: String = "mode-microphone"
        ) {
            self.movieName = movieName
            self.movieLocation = movieLocation
            self.microphone = microphone
            self.microphoneName = microphoneName
        }
    }

    /// The session acted on.
    public let session: CaptureSession
    /// Where files go, and what remote callers may name.
    public let folders: SessionFolders
    /// How much media work (decoding, scaling, cropping, trimming) remote callers get at once.
    public let mediaWork = MediaWorkGate()
    /// What video mode adds.
    public let videoMode: VideoMode

    private let state = Locked(State())
    private let recordings = Locked<Task<Void, Never>?>(nil)
    private let observer: (@Sendable (CommandOutcome) -> Void)?

    /// What a command came to, as an observer hears it (`init(..., onCommand:)`).
    public struct CommandOutcome: Sendable {
        /// The command.
        public var command: ControlCommand
        /// Who sent it.
        public var caller: ControlCaller
        /// What it did, or why it failed.
        public var result: Result<ControlResult, CaptureError>
    }

    private struct State {
        var flashMode: FlashMode?
        var overlayTexts: [OverlayKey: (template: String, shown: String)] = [:]
        var lastRecordings: [String: String] = [:]
        var picks: [String: MediaLibrary.Item] = [:]
        /// The pick names, oldest first: at most `maximumPicks` are kept.
        var pickOrder: [String] = []
        var switchingMode = false
    }

    private struct OverlayKey: Hashable {
        var output: String
        var name: String
    }

    /// A controller for a session.
    /// - Parameters:
    ///   - session: The session acted on.
    ///   - folders: Where relative locations go and what remote callers may name.
    ///   - videoMode: What video mode adds (`switchMode(.video)`).
    ///   - onCommand: Hears what every command came to, once it is done, on the task that performed it
    ///     (it must not block): a log, an event stream.
    public init(
        session: CaptureSession, folders: SessionFolders, videoMode: VideoMode = VideoMode(),
        onCommand: (@Sendable (CommandOutcome) -> Void)? = nil
    ) {
        self.session = session
        self.folders = folders
        self.videoMode = videoMode
        observer = onCommand
        // Recordings that end by themselves (a maximum duration, an interruption) are the last too.
        let stream = session.events()
        recordings.value = Task { [weak self] in
            for await event in stream {
                if case .recordingFinished(let output, let result) = event.kind, result.success {
                    self?.state.withLock { $0.lastRecordings[output] = result.location }
                }
            }
        }
    }

    deinit { recordings.value?.cancel() }

    // MARK: State

    /// The flash mode `toggleFlash` chose (nil: the camera's own).
    public var flashMode: FlashMode? { state.withLock { $0.flashMode } }

    /// The file of the last recording a movie output finished (nil: none yet).
    public func lastRecording(of output: String) -> String? { state.withLock { $0.lastRecordings[output] } }

    /// How many picks are kept by name; a new name beyond forgets the oldest.
    public static let maximumPicks = 64

    /// The item picked from the album under a name (`pickFromLibrary`; nil: none yet, or forgotten
    /// after `maximumPicks` newer names).
    public func picked(_ name: String) -> MediaLibrary.Item? { state.withLock { $0.picks[name] } }

    /// The names items are picked under now, with each item's kind: what a command read as text
    /// (MQTT's) may name with `picked=`.
    public var pickedKinds: [String: MediaLibrary.MediaKind] { state.withLock { $0.picks.mapValues(\.kind) } }

    /// The session's state as overlay texts show it.
    public var overlayState: OverlayPlaceholders { OverlayPlaceholders(session: session, flashMode: flashMode) }

    /// `video` while the session has a movie output, else `photo`.
    public var mode: CaptureMode { session.outputs.contains { $0 is CaptureMovieFileOutput } ? .video : .photo }

    /// The session's first photo output (what the shutter uses).
    public var photoOutput: CapturePhotoOutput? { session.outputs.lazy.compactMap { $0 as? CapturePhotoOutput }.first }
    /// The session's first movie output (what record uses).
    public var movieOutput: CaptureMovieFileOutput? { session.outputs.lazy.compactMap { $0 as? CaptureMovieFileOutput }.first }
    /// The session's first camera input.
    public var camera: CaptureDeviceInput? { session.inputs.first { $0.mediaType == .video } }

    // MARK: Commands

    /// Performs one command for `caller`. Errors are the session's typed errors; a remote caller's
    /// command that names what `RemoteAccess` does not allow fails with `notPermitted` before anything
    /// is opened or written. Overlay texts showing the session's state are brought up to date after it.
    @discardableResult
    public func perform(_ command: ControlCommand, as caller: ControlCaller = .local) async throws(CaptureError) -> ControlResult {
        let result: Result<ControlResult, CaptureError>
        do { result = .success(try await run(command, caller: caller)) } catch {
            // A remote caller reads files by the names it knows, never the folders' paths.
            result = .failure(caller == .remote ? folders.remoteError(error) : error)
        }
        refreshOverlayTexts()
        observer?(CommandOutcome(command: command, caller: caller, result: result))
        return try result.get()
    }

    private func run(_ command: ControlCommand, caller: ControlCaller) async throws(CaptureError) -> ControlResult {
        switch command {
        case .start:
            try await session.startRunning()
            return .done
        case .stop:
            await session.stopRunning()
            return .done
        case .takePhoto(let request):
            return .photos(try await takePhoto(request, caller: caller))
        case .startRecording(let name, let location):
            let path = try location.map { (text: String) throws(CaptureError) -> String in try folders.writeLocation(text, for: caller) }
            let movie = try movieOutput(name)
            let url = try await movie.startRecording(to: path)
            return .recordingStarted(output: movie.name, location: url.path)
        case .stopRecording(let name):
            let movie = try movieOutput(name)
            let result = try await movie.stopRecording()
            if result.success { state.withLock { $0.lastRecordings[movie.name] = result.location } }
            return .recordingStopped(output: movie.name, result)
        case .pauseRecording(let name):
            let movie = try movieOutput(name)
            try movie.pauseRecording()
            return .recordingPaused(output: movie.name, location: movie.outputFileURL?.path ?? "", duration: movie.recordedDuration)
        case .resumeRecording(let name):
            let movie = try movieOutput(name)
            try movie.resumeRecording()
            return .recordingResumed(output: movie.name, location: movie.outputFileURL?.path ?? "", duration: movie.recordedDuration)
        case .switchMode(let wanted):
            return .mode(try await switchMode(to: wanted, caller: caller))
        case .toggleFlash(let name):
            return .flashMode(try toggleFlash(name))
        case .setTorch(let on):
            guard let camera else { throw .noDeviceAvailable(media: .video) }
            let wanted = on ?? (camera.device.torchMode != .on)
            try configure(camera.name) { device throws(CaptureError) in _ = try device.setTorchMode(wanted ? .on : .off) }
            return .torch(on: wanted)
        case .switchCamera(let position):
            // A camera switch is a configuration block of its own: not inside one someone has open.
            guard !session.isConfiguring else {
                throw .invalidConfiguration(object: "the session", reason: "a configuration block is open; switch the camera once it is committed")
            }
            return .camera(try await session.switchCamera(to: position))
        case .configureDevice(let input, let change):
            try configure(input, change)
            return .done
        case .setPreset(let preset):
            try await applyChange(valid: session.canSetSessionPreset(preset)) { () throws(CaptureError) in try session.setSessionPreset(preset) }
            return .done
        case .addInput(let input):
            if caller == .remote { try checkRemote(input) }
            try await applyChange(valid: session.canAddInput(input)) { () throws(CaptureError) in try session.addInput(input) }
            return .done
        case .removeInput(let name):
            guard let input = session.input(named: name) else { throw .unknownInput(name: name) }
            try await applyChange(valid: true) { () throws(CaptureError) in try session.removeInput(input) }
            return .done
        case .addOutput(let output):
            if caller == .remote { try checkRemote(output) }
            try await applyChange(valid: session.canAddOutput(output)) { () throws(CaptureError) in try session.addOutput(output) }
            return .done
        case .removeOutput(let name):
            guard let output = session.output(named: name) else { throw .unknownOutput(name: name) }
            try await applyChange(valid: true) { () throws(CaptureError) in try session.removeOutput(output) }
            return .done
        case .addOverlay(let overlay, let outputs):
            try addOverlay(overlay, to: outputs, caller: caller)
            return .done
        case .updateOverlay(let name, let outputs, let change):
            try updateOverlay(name, on: outputs, caller: caller, change)
            return .done
        case .removeOverlay(let name, let outputs):
            let targets = try OverlayTargets.outputs(outputs, overlay: name, in: session)
            for output in targets where !output.overlays.contains(where: { $0.name == name }) { throw .unknownOverlay(name: name, output: output.name) }
            for output in targets { try output.removeOverlay(named: name) }
            forgetTexts(name, on: targets)
            return .done
        case .trim(let request):
            return try await gated(caller) { () async throws(CaptureError) -> ControlResult in try await trim(request, caller: caller) }
        case .thumbnail(let request):
            return try await gated(caller) { () async throws(CaptureError) -> ControlResult in try await thumbnail(request, caller: caller) }
        case .pickFromLibrary(let request):
            return try await gated(caller) { () async throws(CaptureError) -> ControlResult in try await pick(request, caller: caller) }
        }
    }

    /// A remote caller's media work waits for its turn at `mediaWork`, or is refused as `busy`.
    func gated<T>(_ caller: ControlCaller, _ work: () async throws(CaptureError) -> T) async throws(CaptureError) -> T {
        caller == .remote ? try await mediaWork.run("the session's media work", work) : try await work()
    }

    // MARK: Editing

    private func trim(_ request: VideoTrimRequest, caller: ControlCaller) async throws(CaptureError) -> ControlResult {
        let source = try video(request.source, caller: caller)
        let location = try folders.writeLocation(request.location, for: caller)
        if request.saveToLibrary, caller == .remote, folders.remote.album == nil {
            throw .notPermitted(what: "save-to-library", reason: "this session does not let remote callers save into the album")
        }
        let result = try await VideoEditor.trim(videoAt: source, from: request.from, to: request.to, saveTo: location, mode: request.mode)
        let library = caller == .remote ? folders.remote.album : MediaLibrary.user()
        let item = request.saveToLibrary ? try await library?.save(videoAt: result.location) : nil
        return .trimmed(result, libraryLocation: item?.path)
    }

    private func thumbnail(_ request: VideoThumbnailRequest, caller: ControlCaller) async throws(CaptureError) -> ControlResult {
        let source = try video(request.source, caller: caller)
        let location = try folders.writeLocation(request.location, for: caller)
        var generator = AssetImageGenerator(videoAt: source)
        generator.maximumSize = request.maximumSize
        let image = try await generator.saveImage(at: request.time, to: location)
        return .thumbnail(source: source, location: location, image)
    }

    /// The album's item a pick names: the user's album for a local caller, the album `RemoteAccess`
    /// allows for a remote one (none: `notPermitted`). Its size and duration are read.
    private func pick(_ request: LibraryPick, caller: ControlCaller) async throws(CaptureError) -> ControlResult {
        let library: MediaLibrary
        if caller == .remote {
            guard let album = folders.remote.album else {
                throw .notPermitted(what: "pick-from-library", reason: "this session does not let remote callers read the album")
            }
            library = album
        } else {
            library = MediaLibrary.user()
        }
        // A remote caller picks among the files it may read (`readLocation`'s rule: a regular file whose
        // real place is inside the album; a link leading out is not one of them).
        let folders = self.folders
        let readable: @Sendable (String) -> Bool = { path in caller == .local || (try? folders.checkReadable(path, as: path)) != nil }
        // The folders are read and videos probed on a thread of their own, never on the concurrency pool.
        let item = try await onOwnThread { () -> Result<MediaLibrary.Item, CaptureError> in
            do throws(CaptureError) { return .success(try library.pick(request.kind, named: request.file, accepting: readable)) } catch {
                // A remote caller hears of the album's folders by the names it gives them, not where they are.
                if caller == .remote, case .libraryItemNotFound(let kind, let name, _) = error {
                    return .failure(.libraryItemNotFound(kind: kind, name: name, folders: [SessionFolders.albumPhotos, SessionFolders.albumVideos]))
                }
                return .failure(error)
            }
        }.get()
        state.withLock { state in
            // Names are kept as they come (a remote caller chooses them): the oldest goes beyond the bound.
            if state.picks.updateValue(item, forKey: request.name) == nil { state.pickOrder.append(request.name) }
            while state.pickOrder.count > Self.maximumPicks { state.picks[state.pickOrder.removeFirst()] = nil }
        }
        return .picked(name: request.name, item)
    }

    // MARK: Photos and recordings

    private func takePhoto(_ request: PhotoRequest, caller: ControlCaller) async throws(CaptureError) -> [Photo] {
        let photo: CapturePhotoOutput
        if let name = request.output {
            guard let named = try output(name) as? CapturePhotoOutput else {
                throw .invalidConfiguration(object: "output '\(name)'", reason: "capture-photo needs a photo output")
            }
            photo = named
        } else {
            guard let first = photoOutput else { throw .invalidConfiguration(object: "the session", reason: "it has no photo output") }
            photo = first
        }
        let location = try request.location.map { (text: String) throws(CaptureError) -> String in try folders.writeLocation(text, for: caller) }
        let defaults = photo.defaults
        var photos: [Photo] = []
        for index in 0..<max(1, request.count) {
            if index > 0, let interval = request.interval {
                do { try await Task.sleep(for: interval) } catch { break }
            }
            // Without a flash mode in the request, the mode the flash button chose applies, else the
            // camera's own.
            let settings = PhotoSettings(
                codec: defaults.codec, quality: defaults.quality, size: defaults.size,
                flashMode: request.flashMode ?? flashMode ?? photoDevice(photo)?.flashMode ?? .off,
                location: location, tags: request.tags)
            photos.append(try await photo.capturePhoto(with: settings))
        }
        return photos
    }

    private func movieOutput(_ name: String?) throws(CaptureError) -> CaptureMovieFileOutput {
        if let name {
            guard let movie = try output(name) as? CaptureMovieFileOutput else {
                throw .invalidConfiguration(object: "output '\(name)'", reason: "recording needs a movie output")
            }
            return movie
        }
        guard let movie = movieOutput else {
            throw .invalidConfiguration(object: "the session", reason: "it has no movie output; switch to video mode first")
        }
        return movie
    }

    /// The camera a photo output takes its frames from.
    private func photoDevice(_ photo: CapturePhotoOutput) -> CaptureDevice? {
        let inputs = session.inputs.filter { $0.mediaType == .video }
        return (photo.connection.input.flatMap { name in inputs.first { $0.name == name } } ?? inputs.first)?.device
    }

    private func output(_ name: String) throws(CaptureError) -> CaptureOutput {
        guard let output = session.output(named: name) else { throw .unknownOutput(name: name) }
        return output
    }

    /// The file a trim or a thumbnail reads.
    func video(_ source: VideoSource, caller: ControlCaller) throws(CaptureError) -> String {
        switch source {
        case .file(let path):
            return try folders.readLocation(path, for: caller)
        case .lastRecording(let output):
            guard let location = lastRecording(of: output) else { throw .noRecordingYet(output: output) }
            return location
        case .picked(let name):
            guard let item = picked(name) else {
                throw .invalidConfiguration(
                    object: "picked '\(name)'", reason: "nothing was picked from the album under that name; pick it first (pick-from-library, name=\(name))")
            }
            guard item.kind == .video else {
                throw .notAMediaFile(path: item.path, reason: "it is the photo picked as '\(name)'; a trim or a thumbnail reads a video")
            }
            return item.path
        }
    }

    // MARK: Buttons

    private func toggleFlash(_ name: String?) throws(CaptureError) -> FlashMode {
        let photo: CapturePhotoOutput
        if let name {
            guard let named = try output(name) as? CapturePhotoOutput else {
                throw .invalidConfiguration(object: "output '\(name)'", reason: "toggle-flash needs a photo output")
            }
            photo = named
        } else {
            guard let first = photoOutput else { throw .invalidConfiguration(object: "the session", reason: "toggle-flash needs a photo output") }
            photo = first
        }
        let current = overlayState.flashMode
        // A camera app's flash button: auto, on, off, then auto again; on only with a flash.
        let modes: [FlashMode] = photo.supportedFlashModes.contains(.on) ? [.auto, .on, .off] : [.auto, .off]
        let next = modes[((modes.firstIndex(of: current) ?? modes.count - 1) + 1) % modes.count]
        state.withLock { $0.flashMode = next }
        return next
    }

    /// Settings applied to a camera while the controller holds its configuration lock; a lock another
    /// holder has is `device-locked`.
    private func configure(_ inputName: String, _ change: ControlCommand.ConfigureDevice) throws(CaptureError) {
        guard let input = session.input(named: inputName) else { throw .unknownInput(name: inputName) }
        let device = input.device
        try device.lockForConfiguration(holder: "session '\(session.name)' (configure-device, input=\(inputName))")
        defer { device.unlockForConfiguration() }
        try change(device)
    }

    /// Photo <-> video: the movie output (and the microphone, when configured) added or removed in one
    /// configuration block, on the running session: the preview goes on without a gap.
    private func switchMode(to wanted: CaptureMode, caller: ControlCaller) async throws(CaptureError) -> CaptureMode {
        let busy = state.withLock { state -> Bool in
            defer { state.switchingMode = true }
            return state.switchingMode
        }
        guard !busy else { throw .invalidConfiguration(object: "the session", reason: "a mode switch is going on; try again") }
        defer { state.withLock { $0.switchingMode = false } }
        guard wanted != mode else { return wanted }
        guard !session.isConfiguring else {
            throw .invalidConfiguration(object: "the session", reason: "a configuration block is open; switch the mode once it is committed")
        }
        switch wanted {
        case .video:
            var settings = MovieSettings()
            settings.location = try folders.writeLocation(videoMode.movieLocation, for: .local)
            let movie = CaptureMovieFileOutput(name: videoMode.movieName, settings: settings)
            var microphone: CaptureDeviceInput?
            if let spec = videoMode.microphone, !session.inputs.contains(where: { $0.mediaType == .audio }) {
                microphone = try CaptureDeviceInput(device: try CaptureDevice.resolve(spec), name: videoMode.microphoneName)
            }
            try await session.applyChange { () throws(CaptureError) in
                if let microphone { try session.addInput(microphone) }
                try session.addOutput(movie)
            }
        case .photo:
            guard let movie = movieOutput else { return .photo }
            if movie.isRecording { throw .recordingInProgress(output: movie.name, location: movie.outputFileURL?.path ?? "") }
            let microphone = session.input(named: videoMode.microphoneName)
            try await session.applyChange { () throws(CaptureError) in
                try session.removeOutput(movie)
                if let microphone { try session.removeInput(microphone) }
            }
        }
        return mode
    }

    /// A configuration change outside a configuration block: on a running session a block of one,
    /// which returns once the pipeline is edited (inside a block someone holds open, it joins that
    /// block). A change the session would refuse (`valid` false) is made alone, so that it throws its
    /// own typed error and no empty block is committed.
    private func applyChange(valid: Bool, _ change: () throws(CaptureError) -> Void) async throws(CaptureError) {
        guard valid else {
            try change()
            return
        }
        try await session.applyChange(change)
    }

    // MARK: Remote callers

    /// What an output built for a remote caller would write to, or send to, is allowed.
    private func checkRemote(_ output: CaptureOutput) throws(CaptureError) {
        let limit = folders.remote.maximumOutputs
        guard session.outputs.count < limit else {
            throw .notPermitted(what: output.name, reason: "the session has \(session.outputs.count) outputs; remote callers add none beyond \(limit)")
        }
        var written: [String?] = []
        var album = false
        switch output {
        case let photo as CapturePhotoOutput:
            written.append(photo.defaults.location)
            album = photo.defaults.library != nil
        case let movie as CaptureMovieFileOutput:
            written.append(movie.settings.location)
            album = movie.settings.library != nil
        case let sequence as CaptureImageSequenceOutput:
            written.append(sequence.location)
        case let stream as CaptureStreamOutput:
            guard folders.remote.streamURLs.contains(stream.destination.url) else {
                throw .notPermitted(
                    what: stream.destination.url.description,
                    reason: "remote callers may stream only to the URLs the operator allowed at start (--allow-stream)")
            }
        default:
            break
        }
        for path in written.compactMap({ $0 }) { try folders.checkRemote(path: path, writing: true) }
        if album, folders.remote.album == nil {
            throw .notPermitted(what: "save-to-library", reason: "this session does not let remote callers save into the album")
        }
        for overlay in output.overlays { try checkRemote(overlay) }
    }

    /// A remote caller's input: a camera or microphone by id, a virtual device, or a file allowed to it.
    private func checkRemote(_ input: CaptureDeviceInput) throws(CaptureError) {
        let limit = folders.remote.maximumInputs
        guard session.inputs.count < limit else {
            throw .notPermitted(what: input.name, reason: "the session has \(session.inputs.count) inputs; remote callers add none beyond \(limit)")
        }
        if case .file(let path) = input.device.kind { try folders.checkRemote(path: path, writing: false) }
    }

    private func checkRemote(_ overlay: CaptureOverlay) throws(CaptureError) {
        if case .image(let path, _) = overlay.content { try folders.checkRemote(path: path, writing: false) }
    }

    // MARK: Overlays

    private func addOverlay(_ overlay: CaptureOverlay, to names: [String], caller: ControlCaller) throws(CaptureError) {
        if caller == .remote { try checkRemote(overlay) }
        let targets = try OverlayTargets.outputs(names, overlay: overlay.name, in: session)
        let limit = folders.remote.maximumOverlaysPerOutput
        if caller == .remote, let full = targets.first(where: { $0.overlays.count >= limit }) {
            throw .notPermitted(
                what: overlay.name, reason: "output '\(full.name)' has \(full.overlays.count) overlays; remote callers add none beyond \(limit)")
        }
        var shown = overlay
        let template = Self.template(of: overlay)
        if let template, case .text(_, let style) = overlay.content { shown.content = .text(overlayState.fill(template), style: style) }
        try shown.validate()
        for output in targets where output.overlays.contains(where: { $0.name == overlay.name }) {
            throw .invalidOverlay(overlay: overlay.name, key: "name", reason: "is already used by another overlay of \(output.description)")
        }
        for output in targets { try output.addOverlay(shown) }
        if let template { remember(template, shown: shown, on: targets) }
    }

    private func updateOverlay(_ name: String, on names: [String], caller: ControlCaller, _ change: ControlCommand.OverlayChange) throws(CaptureError) {
        let targets = try OverlayTargets.outputs(names, overlay: name, in: session)
        let placeholders = overlayState
        var changed: [(CaptureOutput, CaptureOverlay, template: String?, textChanged: Bool)] = []
        for output in targets {
            guard let current = output.overlays.first(where: { $0.name == name }) else { throw .unknownOverlay(name: name, output: output.name) }
            var next = change(current)
            if caller == .remote { try checkRemote(next) }
            let template = Self.template(of: next)
            if let template, case .text(_, let style) = next.content { next.content = .text(placeholders.fill(template), style: style) }
            try next.validate()
            changed.append((output, next, template, next.content != current.content || template != nil))
        }
        for (output, next, template, textChanged) in changed {
            try output.updateOverlay(named: name) { $0 = next }
            guard textChanged else { continue }
            forgetTexts(name, on: [output])
            if let template { remember(template, shown: next, on: [output]) }
        }
    }

    /// A text overlay's text when it holds placeholders.
    private static func template(of overlay: CaptureOverlay) -> String? {
        guard case .text(let text, _) = overlay.content, OverlayPlaceholders.appear(in: text) else { return nil }
        return text
    }

    /// Keeps the text of overlays that hold placeholders (declared ones too: `rememberOverlayTexts`),
    /// to show the state as it changes.
    private func remember(_ template: String, shown: CaptureOverlay, on outputs: [CaptureOutput]) {
        guard case .text(let text, _) = shown.content else { return }
        state.withLock { state in
            for output in outputs { state.overlayTexts[OverlayKey(output: output.name, name: shown.name)] = (template, text) }
        }
    }

    /// Overlays added without the controller (a `.pipeline` file's declarations) whose text was
    /// written with placeholders: `template` is the text as written; the controller keeps it up to date.
    public func rememberOverlayText(_ template: String, overlay name: String, on outputs: [String]) {
        guard OverlayPlaceholders.appear(in: template) else { return }
        let shown = overlayState.fill(template)
        state.withLock { state in
            for output in outputs { state.overlayTexts[OverlayKey(output: output, name: name)] = (template, shown) }
        }
    }

    private func forgetTexts(_ name: String, on outputs: [CaptureOutput]) {
        state.withLock { state in
            for output in outputs { state.overlayTexts[OverlayKey(output: output.name, name: name)] = nil }
        }
    }

    /// Shows the session's state in the overlay texts that hold placeholders (only those that change).
    public func refreshOverlayTexts() {
        let texts = state.withLock { $0.overlayTexts }
        guard !texts.isEmpty else { return }
        let current = overlayState
        for (key, text) in texts {
            let shown = current.fill(text.template)
            guard shown != text.shown, let output = session.output(named: key.output) else { continue }
            do {
                try output.updateOverlay(named: key.name) { overlay in
                    if case .text(_, let style) = overlay.content { overlay.content = .text(shown, style: style) }
                }
                state.withLock { $0.overlayTexts[key]?.shown = shown }
            } catch {
                // The overlay went away with its output: nothing left to show.
                state.withLock { $0.overlayTexts[key] = nil }
            }
        }
    }
}

/// The outputs an overlay command names.
public enum OverlayTargets {
    /// Each output by its name; `preview`, when no output has that name, means every preview output of
    /// the session. Empty `names`: every output that has an overlay named `overlay`.
    public static func outputs(_ names: [String], overlay: String, in session: CaptureSession) throws(CaptureError) -> [CaptureOutput] {
        if names.isEmpty {
            let holders = session.outputs.filter { $0.overlays.contains { $0.name == overlay } }
            guard !holders.isEmpty else { throw .unknownOverlay(name: overlay, output: nil) }
            return holders
        }
        var targets: [CaptureOutput] = []
        for name in names {
            if let output = session.output(named: name) {
                targets.append(output)
            } else if name == "preview", case let previews = session.outputs.filter({ $0 is CaptureVideoPreviewOutput }), !previews.isEmpty {
                targets += previews
            } else {
                throw .unknownOutput(name: name)
            }
        }
        return targets
    }
}
