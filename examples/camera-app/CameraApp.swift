import CGtk
import Capture
import CaptureControl
import CaptureGTK
import Foundation

/// The app's pages.
enum Page: String {
    case camera, album, viewer, crop, trim
}

/// Prints one event line for people and for the app's test (`event NAME key=value ...`, with the
/// monotonic time the frame log uses).
func log(_ name: String, _ fields: String = "") {
    print(String(format: "event %.6f %@ %@", GTK.monotonicSeconds(), name, fields))
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The camera app: the window, its pages and the session behind them.
@MainActor
final class CameraApp {
    let options: Options
    let window: Window
    let library = MediaLibrary.user()
    let session = CaptureSession(name: "camera-app")
    let controller: SessionController
    let preview = CaptureVideoPreviewOutput(name: "preview")
    let previewView: CapturePreviewView
    var hasCamera = false

    // Pages
    let stack = Widget(gtk_stack_new()!)
    private(set) var page = Page.camera
    let album = AlbumPage()
    let viewer = ViewerPage()
    let crop = CropPage()
    let trim = TrimPage()

    // The camera page's controls
    let status = Make.label("", style: "status")
    let toast = Make.label("", style: "toast")
    let modeLabel = Make.label("PHOTO", style: "mode")
    let timeLabel = Make.label("", style: "recording")
    let editLabel = Make.label("", style: "chip")
    let help = Make.label(Shortcuts.helpText, style: "help")
    var flashButton: Widget!
    var torchButton: Widget!
    var cameraButton: Widget!
    var shutterButton: Widget!
    var modeButton: Widget!

    // State
    var mode = CaptureMode.photo
    var isBusy = false
    var recordingSince: Double?
    var editsAfterShot: Bool
    var toastTimer: UInt32?
    let frameLog: FrameLog?

    init(options: Options) {
        self.options = options
        editsAfterShot = options.editsAfterShot
        try? FileManager.default.createDirectory(atPath: options.outputFolder, withIntermediateDirectories: true)
        controller = SessionController(
            session: session, folders: SessionFolders(outputFolder: options.outputFolder),
            videoMode: SessionController.VideoMode(movieLocation: "\(library.videosFolder)/VID_%04d.mp4", microphone: Self.microphone(options.microphone)))
        window = Window(title: "Camera", width: options.width, height: options.height)
        previewView = CapturePreviewView(preview: preview)
        frameLog = options.frameLog.flatMap(FrameLog.init(path:))
        Make.css(Self.css)
        for (page, widget) in [(Page.camera, cameraPage()), (.album, album.widget), (.viewer, viewer.widget), (.crop, crop.widget), (.trim, trim.widget)] {
            Make.addPage(stack, page.rawValue, widget)
        }
        Make.show(stack, page: Page.camera.rawValue)
        window.setChild(stack)
        Shortcuts.install(in: self)
        album.app = self
        viewer.app = self
        crop.app = self
        trim.app = self
    }

    /// Video mode's microphone from `--microphone`: auto is the first microphone when there is one.
    static func microphone(_ option: String) -> String? {
        switch option {
        case "none": return nil
        case "auto": return CaptureDevice.default(for: .audio) != nil ? "default-audio" : nil
        default: return option
        }
    }

    // MARK: The camera page (recipe 9-4: custom controls over the preview)

    private func cameraPage() -> Widget {
        flashButton = Make.button("Flash: Auto") { [unowned self] in toggleFlash() }.tooltip("Flash (f)")
        torchButton = Make.button("Torch: Off") { [unowned self] in toggleTorch() }.tooltip("Torch (t)")
        cameraButton = Make.button("camera-switch-symbolic", icon: true) { [unowned self] in switchCamera() }.tooltip("Switch camera (c)")
        let helpButton = Make.button("?") { [unowned self] in toggleHelp() }.tooltip("Keyboard shortcuts (F1)")
        let top = Make.box(
            GTK_ORIENTATION_HORIZONTAL, spacing: 8,
            [flashButton, torchButton, cameraButton, Self.spacer(), modeLabel, timeLabel, Self.spacer(), editLabel, helpButton]
        )
        .style("bar").align(GTK_ALIGN_FILL, GTK_ALIGN_START)
        shutterButton = Make.button("") { [unowned self] in shutter() }.style("shutter").size(64, 64).tooltip("Shutter (space)")
        modeButton = Make.button("Video") { [unowned self] in switchMode() }.tooltip("Photo / video (v)")
        let albumButton = Make.button("Album") { [unowned self] in showAlbum(picking: false) }.tooltip("Album (a)")
        let pickButton = Make.button("Choose…") { [unowned self] in showAlbum(picking: true) }.tooltip("Choose from the album (p)")
        let editButton = Make.button("Edit Video") { [unowned self] in editLastVideo() }.tooltip("Trim the last recording (x)")
        for button in [albumButton, pickButton, editButton, modeButton!] { button.align(GTK_ALIGN_CENTER, GTK_ALIGN_CENTER) }
        let bottom = Make.box(
            GTK_ORIENTATION_HORIZONTAL, spacing: 12,
            [albumButton, pickButton, Self.spacer(), shutterButton.align(GTK_ALIGN_CENTER, GTK_ALIGN_CENTER), Self.spacer(), editButton, modeButton]
        ).style("bar").align(GTK_ALIGN_FILL, GTK_ALIGN_END)
        status.align(GTK_ALIGN_CENTER, GTK_ALIGN_CENTER).isVisible = false
        toast.align(GTK_ALIGN_CENTER, GTK_ALIGN_START).margin(56).isVisible = false
        help.align(GTK_ALIGN_CENTER, GTK_ALIGN_CENTER).isVisible = false
        timeLabel.isVisible = false
        updateEditLabel()
        // Tap to focus: the point converted through the preview's geometry.
        previewView.widget.onClick { [unowned self] _, x, y in focus(atX: x, y: y) }
        return Make.overlay(previewView.widget, [top, bottom, status, toast, help])
    }

    static func spacer() -> Widget { Widget(gtk_label_new("")!).expand(true, false) }

    // MARK: Starting and stopping

    func start() {
        window.present()
        log("started", "album=\(library.picturesFolder)|\(library.videosFolder) output=\(options.outputFolder)")
        let device: CaptureDevice?
        if options.input == "default" {
            device = CaptureDevice.default(for: .video)
        } else {
            device = try? CaptureDevice.resolve(options.input)
        }
        guard let device, device.mediaType == .video else {
            cameraUnavailable()
            return
        }
        do {
            try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
            try session.setSessionPreset(.hd1280x720)
            try session.addOutput(preview)
            try session.addOutput(CapturePhotoOutput(name: "photo"))
        } catch {
            cameraUnavailable(error.description)
            return
        }
        hasCamera = true
        if let frameLog { previewView.onArrival { frameLog.write($0) } }
        var firstFrame = true
        previewView.onShown { arrival in
            if firstFrame {
                firstFrame = false
                log("first-frame", "size=\(arrival.width)x\(arrival.height)")
            }
        }
        updateToggles()
        // The session starts once the view is laid out (its size is the preview's), so that the first
        // frame already has the view's size; after a second it starts anyway.
        let deadline = GTK.monotonicSeconds() + 1
        GTK.every(milliseconds: 10) { [unowned self] in
            guard preview.viewSize == nil, GTK.monotonicSeconds() < deadline else {
                startSession(device)
                return false
            }
            return true
        }
    }

    private func startSession(_ device: CaptureDevice) {
        log("starting", "view=\(preview.viewSize.map { "\($0.width)x\($0.height)" } ?? "-")")
        let controller = controller
        GTK.perform({ () async throws(CaptureError) in try await controller.perform(.start) }) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                log("running", "camera=\(device.uniqueID)")
                updateToggles()
            case .failure(let error): cameraUnavailable(error.description)
            }
        }
    }

    func cameraUnavailable(_ detail: String? = nil) {
        hasCamera = false
        Make.setText(status, "Camera Unavailable")
        status.isVisible = true
        for button in [shutterButton, modeButton] { button?.isSensitive = false }
        updateToggles()
        log("camera-unavailable", detail ?? "no camera")
    }

    func shutDown() {
        let done = DispatchSemaphore(value: 0)
        let session = session
        Task.detached {
            await session.stopRunning()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 5)
        frameLog?.close()
        log("quit", "shown=\(previewView.shownFrameCount) dropped=\(previewView.droppedFrameCount) rendered=\(preview.renderedFrameCount)")
    }

    // MARK: Messages

    /// Shows a message over the preview (or the page shown) for a few seconds.
    func message(_ text: String) {
        log("message", "text=\"\(text)\"")
        Make.setText(toast, text)
        toast.isVisible = true
        if let toastTimer { GTK.cancel(toastTimer) }
        toastTimer = GTK.every(milliseconds: 3000) { [unowned self] in
            toast.isVisible = false
            toastTimer = nil
            return false
        }
        album.message(text)
    }

    func toggleHelp() { help.isVisible.toggle() }

    // MARK: Pages

    func show(_ next: Page) {
        page = next
        Make.show(stack, page: next.rawValue)
        log("page", "name=\(next.rawValue)")
    }

    func showAlbum(picking: Bool) {
        album.reload(picking: picking)
        show(.album)
    }

    /// Runs a controller command off the main thread and hands its result back to `done` on it;
    /// errors become a message. One at a time (the buttons are insensitive meanwhile).
    func perform(
        _ command: ControlCommand, busy: Bool = true, failed: (@MainActor (CaptureError) -> String)? = nil, _ done: @escaping @MainActor (ControlResult) -> Void
    ) {
        if busy {
            guard !isBusy else { return }
            isBusy = true
        }
        let controller = controller
        GTK.perform({ () async throws(CaptureError) in try await controller.perform(command) }) { [weak self] result in
            guard let self else { return }
            if busy { isBusy = false }
            switch result {
            case .success(let value): done(value)
            case .failure(let error):
                log("error", "command=\(command.name) error=\"\(error.description)\"")
                message(failed?(error) ?? error.description)
            }
        }
    }

    // MARK: Actions

    func shutter() {
        guard hasCamera else { return message("Camera Unavailable") }
        if mode == .video { return toggleRecording() }
        // The crop step keeps the shot in the working folder until the user uses or cancels it.
        let location = editsAfterShot ? "shot-\(Int(Date().timeIntervalSince1970 * 1000)).jpg" : nil
        log("shutter")
        perform(.takePhoto(PhotoRequest(location: location))) { [unowned self] result in
            guard case .photos(let photos) = result, let photo = photos.first else { return }
            if let path = photo.location {
                crop.open(path: path, afterShot: true)
                show(.crop)
                return
            }
            let library = library
            GTK.perform({ () async throws(CaptureError) in try await library.save(photo: photo) }) { [weak self] saved in
                switch saved {
                case .success(let item):
                    log("photo-saved", "path=\(item.path) size=\(item.width ?? 0)x\(item.height ?? 0)")
                    self?.message("Saved \(URL(fileURLWithPath: item.path).lastPathComponent)")
                case .failure(let error): self?.message("Save failed: \(error.description)")
                }
            }
        }
    }

    func switchMode() {
        guard hasCamera else { return message("Camera Unavailable") }
        let wanted: CaptureMode = mode == .photo ? .video : .photo
        log("mode-switch-begin", "to=\(wanted.rawValue)")
        // The seed's "Can't Access Audio": without the microphone asked for, video mode is refused and
        // the app stays in photo mode.
        let microphone = controller.videoMode.microphone
        let failed = { @MainActor (error: CaptureError) -> String in
            guard wanted == .video, let microphone, (try? CaptureDevice.resolve(microphone)) == nil else { return error.description }
            return "Can't Access Audio: no microphone '\(microphone)'. Staying in photo mode."
        }
        perform(.switchMode(wanted), failed: failed) { [unowned self] result in
            guard case .mode(let now) = result else { return }
            mode = now
            log("mode-switch-end", "mode=\(now.rawValue)")
            Make.setText(modeLabel, now == .video ? "VIDEO" : "PHOTO")
            Make.setButtonText(modeButton, now == .video ? "Photo" : "Video")
            if now == .video { shutterButton.style("video") } else { shutterButton.unstyle("video") }
        }
    }

    func toggleRecording() {
        guard mode == .video else { return message("Switch to video mode to record (v)") }
        if recordingSince == nil {
            perform(.startRecording(output: nil, location: nil)) { [unowned self] result in
                guard case .recordingStarted(_, let location) = result else { return }
                log("recording-started", "path=\(location)")
                recordingSince = GTK.monotonicSeconds()
                shutterButton.style("recording")
                timeLabel.isVisible = true
                modeButton.isSensitive = false
                Make.setText(timeLabel, "● 00:00")
                GTK.every(milliseconds: 250) { [weak self] in self?.updateElapsed() ?? false }
            }
        } else {
            perform(.stopRecording(output: nil)) { [unowned self] result in
                recordingSince = nil
                shutterButton.unstyle("recording")
                timeLabel.isVisible = false
                modeButton.isSensitive = true
                guard case .recordingStopped(_, let movie) = result else { return }
                log("recording-stopped", String(format: "path=%@ duration=%.3f", movie.location, seconds(movie.duration)))
                message("Saved \(URL(fileURLWithPath: movie.location).lastPathComponent)")
            }
        }
    }

    /// The elapsed-time label while recording; false once the recording ended.
    private func updateElapsed() -> Bool {
        guard let since = recordingSince else { return false }
        let seconds = Int(GTK.monotonicSeconds() - since)
        Make.setText(timeLabel, String(format: "● %02d:%02d", seconds / 60, seconds % 60))
        return true
    }

    func toggleFlash() {
        guard hasCamera, flashButton.isVisible else { return }
        perform(.toggleFlash(output: nil), busy: false) { [unowned self] result in
            guard case .flashMode(let flash) = result else { return }
            Make.setButtonText(flashButton, "Flash: \(flash.rawValue.capitalized)")
            log("flash", "mode=\(flash.rawValue)")
        }
    }

    func toggleTorch() {
        guard hasCamera, torchButton.isVisible else { return }
        perform(.setTorch(on: nil), busy: false) { [unowned self] result in
            guard case .torch(let on) = result else { return }
            Make.setButtonText(torchButton, on ? "Torch: On" : "Torch: Off")
            log("torch", "on=\(on)")
        }
    }

    func switchCamera() {
        guard hasCamera, cameraButton.isVisible else { return }
        perform(.switchCamera(position: nil)) { [unowned self] result in
            guard case .camera(let input) = result else { return }
            log("camera", "device=\(input.device.uniqueID)")
            message(input.device.localizedName)
            updateToggles()
        }
    }

    /// Flash, torch and camera buttons show only when the camera has them.
    func updateToggles() {
        let device = controller.camera?.device
        flashButton.isVisible = device?.hasFlash ?? false
        torchButton.isVisible = device?.hasTorch ?? false
        cameraButton.isVisible = device.flatMap { CaptureDevice.camera(after: $0) } != nil
    }

    func toggleEditing() {
        editsAfterShot.toggle()
        updateEditLabel()
        log("edit-after-shot", "on=\(editsAfterShot)")
    }

    private func updateEditLabel() { Make.setText(editLabel, editsAfterShot ? "Edit: On" : "Edit: Off") }

    func cycleGravity() {
        let all = VideoGravity.allCases
        let next = all[(all.firstIndex(of: previewView.videoGravity)! + 1) % all.count]
        previewView.videoGravity = next
        log("gravity", "value=\(next.rawValue)")
        message("Preview: \(next.rawValue)")
    }

    /// Recipe 9-3: the last recording in the trim editor, or "No Video Recorded Yet".
    func editLastVideo() {
        guard let last = controller.lastRecording(of: controller.videoMode.movieName) else {
            return message("No Video Recorded Yet")
        }
        trim.open(path: last)
        show(.trim)
    }

    func focus(atX x: Double, y: Double) {
        guard hasCamera, page == .camera else { return }
        let point = previewView.devicePoint(x: x, y: y)
        log("tap", String(format: "x=%.1f y=%.1f device=%.3f,%.3f", x, y, point.x, point.y))
        guard let camera = controller.camera, camera.device.isFocusPointOfInterestSupported else { return }
        perform(
            .configureDevice(
                input: camera.name,
                change: { device throws(CaptureError) in
                    try device.setFocusPointOfInterest(point)
                }), busy: false
        ) { _ in }
    }

    static let css = """
        .bar { background-color: rgba(0,0,0,0.45); padding: 8px; }
        .bar label, .bar button { color: white; }
        .bar button { background: rgba(255,255,255,0.15); border: none; }
        .bar button.shutter { border-radius: 32px; background: white; border: 4px solid rgba(255,255,255,0.6); min-width: 56px; min-height: 56px; }
        .bar button.shutter.video { background: #d22; }
        .bar button:disabled { opacity: 0.35; }
        .bar button.shutter.recording { background: #d22; border-radius: 8px; border-color: white; }
        .mode { font-weight: bold; letter-spacing: 2px; }
        .recording { color: #f44; font-weight: bold; font-family: monospace; }
        .chip { font-size: small; }
        .status { font-size: 28px; font-weight: bold; color: white; background: rgba(0,0,0,0.6); padding: 16px; border-radius: 8px; }
        .toast { color: white; background: rgba(0,0,0,0.7); padding: 8px 16px; border-radius: 16px; }
        .help { color: white; background: rgba(0,0,0,0.85); padding: 16px; border-radius: 8px; font-family: monospace; }
        .capture-preview { background: black; }
        .thumb { padding: 2px; }
        .thumb.selected { background: #3584e4; }
        .crop-area { background: #222; }
        """
}

/// `--log-frames`: one line per preview frame as it arrives (written on the streaming thread).
final class FrameLog: Sendable {
    private let handle: Locked<FileHandle?>

    init?(path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { return nil }
        self.handle = Locked(handle)
    }

    func write(_ arrival: PreviewFrameArrival) {
        let line = String(format: "frame %d %.6f %.6f %dx%d\n", arrival.sequence, arrival.timestamp, arrival.arrival, arrival.width, arrival.height)
        handle.withLock { $0?.write(Data(line.utf8)) }
    }

    func close() {
        handle.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }
}
