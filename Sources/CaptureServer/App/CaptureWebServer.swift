import Capture
import CaptureControl
import Foundation

/// The web app and HTTP API of `capture serve`: a page with the live preview, the shutter, recording,
/// the photo/video mode switch, codes as they are detected, the camera's toggles and the gallery; an
/// HTTP API for each of those; and the session's events as server-sent events, in the JSON of
/// `capture run --json`.
///
/// The browser is one more client of the engine: every action is a `ControlCommand` performed by the
/// session's `SessionController` as a remote caller (confined to the output folder, `RemoteAccess`),
/// the same controller the keys of `capture run`, the scenario and MQTT act through; the previews are
/// outputs of the session added and removed while it runs. The controller's `CaptureError`s become
/// HTTP statuses here (`status(for:)`).
///
/// Safe by default: see `Configuration` and docs/serve.md.
public final class CaptureWebServer: Sendable {
    /// How the server listens and what it serves.
    public struct Configuration: Sendable {
        /// Where it listens (default 127.0.0.1:8080; port 0 picks a free one).
        public var listen: ListenAddress
        /// The token every request must carry (`Authorization: Bearer T` or `?token=T`). Required, and
        /// generated when nil, when `listen` is not a loopback address; when given, required everywhere.
        public var token: String?
        /// The session's output folder: the gallery lists it and downloads come only from it.
        public var mediaDirectory: String
        /// Request sizes, counts and timeouts.
        public var limits: HTTPLimits
        /// The size of the web previews (nil: the session preset's size).
        public var previewSize: Size?
        /// JPEG quality of the MJPEG preview.
        public var previewQuality: Int
        /// Overlays drawn on the web previews only (a clock with milliseconds, a caption), not on photos
        /// or movies.
        public var previewOverlays: [CaptureOverlay] = []

        /// A configuration; only the media folder is required.
        /// - Parameters:
        ///   - mediaDirectory: The session's output folder, which the gallery lists.
        ///   - listen: Where to listen (127.0.0.1:8080 by default).
        ///   - token: The token requests must carry (nil: none on loopback, generated otherwise).
        ///   - limits: Request sizes, counts and timeouts.
        ///   - previewSize: The size of the web previews (640x360 by default; nil: the session preset's).
        ///   - previewQuality: JPEG quality of the MJPEG preview (70 by default).
        public init(
            mediaDirectory: String, listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080), token: String? = nil,
            limits: HTTPLimits = HTTPLimits(), previewSize: Size? = Size(width: 640, height: 360), previewQuality: Int = 70
        ) {
            self.listen = listen
            self.token = token
            self.mediaDirectory = mediaDirectory
            self.limits = limits
            self.previewSize = previewSize
            self.previewQuality = previewQuality
        }
    }

    /// The names of the outputs and input the server adds to the session (video mode's are the
    /// controller's: `videoMode` is what a session served by `capture serve` uses).
    public enum Names {
        /// The MJPEG preview output, added while a browser views the MJPEG preview.
        public static let jpegPreview = "web-mjpeg"
        /// The WebRTC preview output, added while a browser views the WebRTC preview.
        public static let webRTCPreview = "web-webrtc"
        /// The movie output video mode adds.
        public static let movie = "web-movie"
        /// The microphone input video mode adds with its movie output.
        public static let microphone = "web-microphone"

        /// Video mode as the web app has it: `web-movie` recording `VID_0001.mp4` ... in the output
        /// folder, with `microphone` (a device spec) when the session has no audio input.
        public static func videoMode(microphone: String? = nil) -> SessionController.VideoMode {
            SessionController.VideoMode(movieName: movie, movieLocation: "VID_%04d.mp4", microphone: microphone, microphoneName: Names.microphone)
        }
    }

    /// The controller of the session the server drives (nil while the session is not set up); every
    /// action goes through it.
    public let controllerSource: @Sendable () -> SessionController?
    /// How the server listens and what it serves.
    public let configuration: Configuration
    /// The token requests must carry; nil when none is required (loopback without `--token`).
    public let token: String?
    /// True when the token was generated (the caller should show it).
    public let tokenWasGenerated: Bool
    let catalog: MediaCatalog
    let http: HTTPServer
    let events = ClientRegistry<String>()
    let jpegViewers = ClientRegistry<JPEGPreviewFrame>()
    let jpeg: PreviewHub<CaptureJPEGPreviewOutput>
    let webrtc: PreviewHub<CaptureWebRTCPreviewOutput>
    /// WebRTC viewers by the id their client was given (random, never reused): the output's peer,
    /// when it was offered, when it was last seen connected.
    let webrtcPeers = Locked<[Int: WebRTCViewer]>([:])
    private let monitor = Locked<Task<Void, Never>?>(nil)

    struct WebRTCViewer: Sendable {
        var peer: Int
        var offered: ContinuousClock.Instant
        var lastConnected: ContinuousClock.Instant?
    }

    /// A server for the session of `controller` (asked for at each request: nil while the session is
    /// not set up). Nothing listens before `start()`.
    public init(
        controller: @escaping @Sendable () -> SessionController?, configuration: Configuration, catalog: MediaCatalog? = nil
    ) throws(ServerError) {
        controllerSource = controller
        self.configuration = configuration
        self.catalog = catalog ?? FolderMediaCatalog(root: configuration.mediaDirectory)
        if let token = configuration.token {
            guard !token.isEmpty, token.count <= 256, token.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                throw .invalidToken("a token is 1-256 visible ASCII characters without spaces")
            }
            self.token = token
            tokenWasGenerated = false
        } else if !configuration.listen.isLoopback {
            var generator = SystemRandomNumberGenerator()
            self.token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            tokenWasGenerated = true
        } else {
            self.token = nil
            tokenWasGenerated = false
        }
        let viewers = jpegViewers
        let size = configuration.previewSize, quality = configuration.previewQuality, overlays = configuration.previewOverlays
        let scratch = CaptureJPEGPreviewOutput(name: Names.jpegPreview)
        for overlay in overlays {
            do throws(CaptureError) { try scratch.addOverlay(overlay) } catch { throw .invalidPreviewOverlay(error.description) }
        }
        jpeg = PreviewHub(
            session: { controller()?.session },
            make: {
                let output = CaptureJPEGPreviewOutput(name: Names.jpegPreview, size: size, quality: quality)
                // Checked in init: they can be drawn.
                for overlay in overlays { try? output.addOverlay(overlay) }
                output.frameHandler = { [weak output] frame in
                    let late = viewers.deliver(frame)
                    if late > 0 { output?.reportLateFrames(late) }
                }
                return output
            })
        webrtc = PreviewHub(
            session: { controller()?.session },
            make: {
                let output = CaptureWebRTCPreviewOutput(name: Names.webRTCPreview, size: size)
                for overlay in overlays { try? output.addOverlay(overlay) }
                return output
            })
        // The handler reaches the server through a box that `stop()` empties (no cycle outlives it).
        let box = Locked<CaptureWebServer?>(nil)
        current = box
        http = HTTPServer(listening: configuration.listen, limits: configuration.limits) { request in
            guard let server = box.value else { return .error(.unavailable, "stopping", "the server is stopping") }
            return await server.handle(request)
        }
        box.value = self
    }

    private let current: Locked<CaptureWebServer?>

    /// Starts listening; returns the address with its port.
    @discardableResult
    public func start() throws(ServerError) -> ListenAddress {
        do {
            try FileManager.default.createDirectory(atPath: configuration.mediaDirectory, withIntermediateDirectories: true)
        } catch {
            throw .mediaFolderUnusable(path: configuration.mediaDirectory, reason: error.localizedDescription)
        }
        try http.start()
        monitor.value = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await self?.checkWebRTCViewers()
            }
        }
        return http.address
    }

    /// The page's address (with the token when one is required).
    public var url: String {
        let address = http.address
        let host = address.host == "0.0.0.0" ? "127.0.0.1" : address.host == "::" ? "::1" : address.host
        let shown = ListenAddress(host: host, port: address.port)
        return "http://\(shown)/" + (token.map { "?token=\($0)" } ?? "")
    }

    /// The address it listens on.
    public var address: ListenAddress { http.address }

    /// Hands an event of the run, as its JSON line, to the event-stream clients (call it from the
    /// runner's `onEvent` with `event.jsonLine`).
    public func publish(jsonLine: String) {
        _ = events.deliver(jsonLine)
    }

    /// Stops listening, ends the streams, and lets go of the previews.
    public func stop() {
        monitor.withLock { $0?.cancel() }
        events.closeAll()
        jpegViewers.closeAll()
        http.stop()
        current.value = nil
    }

    // MARK: Requests

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        if let refusal = admit(request) { return refusal }
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/"), ("GET", "/index.html"):
            return WebPage.response()
        case ("GET", "/api/status"):
            return .json(status())
        case ("GET", "/api/events"):
            return eventStream()
        case ("GET", "/stream.mjpeg"):
            return mjpegStream()
        case ("POST", "/api/webrtc/offer"):
            return await webrtcOffer()
        case ("POST", "/api/webrtc/answer"):
            return await webrtcAnswer(request)
        case ("POST", "/api/webrtc/close"):
            guard let id = (request.jsonObject?["id"] as? Int) ?? request.query["id"].flatMap({ Int($0) }) else {
                return .error(.badRequest, "bad-request", "send {\"id\": N}")
            }
            await closeWebRTCViewer(id)
            return .json(["ok": true])
        case ("GET", "/api/preview.jpg"):
            guard let frame = jpeg.output?.latestFrame else { return .error(.notFound, "no-preview", "no viewer is watching; open /stream.mjpeg") }
            return HTTPResponse(headers: [("Content-Type", "image/jpeg")], body: .bytes(frame.bytes))
        case ("GET", "/api/media"):
            return .json(["items": mediaList(limit: min(Int(request.query["limit"] ?? "") ?? 200, 1000))])
        case ("POST", "/api/photo"):
            return await photo()
        case ("POST", "/api/recording/start"), ("POST", "/api/recording/stop"):
            return await recording(start: path.hasSuffix("start"))
        case ("GET", "/api/mode"):
            return .json(["mode": mode])
        case ("POST", "/api/mode"):
            guard let wanted = request.jsonObject?["mode"] as? String ?? request.query["mode"] else {
                return .error(.badRequest, "bad-request", "send {\"mode\": \"photo\"} or {\"mode\": \"video\"}")
            }
            return await switchMode(to: wanted)
        case ("POST", "/api/session/start"):
            return await perform(.start)
        case ("POST", "/api/session/stop"):
            return await perform(.stop)
        case ("POST", "/api/flash"):
            return await perform(.toggleFlash(output: nil))
        case ("POST", "/api/torch"):
            return await perform(.setTorch(on: request.jsonObject?["on"] as? Bool))
        case ("POST", "/api/camera"):
            return await perform(.switchCamera(position: nil))
        default:
            if let answer = await handleRoll(request) { return answer }
            if path.hasPrefix("/media/") {
                return request.method == "GET" ? download(request) : .error(.methodNotAllowed, "method-not-allowed", "GET a media file")
            }
            if Self.routes.contains(path) || Self.rollRoutes.contains(path) {
                return .error(.methodNotAllowed, "method-not-allowed", "\(request.method) is not served at \(path)")
            }
            return .error(.notFound, "not-found", "nothing at \(FileNaming.printable(path)); the API is described in docs/serve.md")
        }
    }

    static let routes: Set<String> = [
        "/", "/index.html", "/api/status", "/api/events", "/stream.mjpeg", "/api/preview.jpg", "/api/media", "/api/photo",
        "/api/recording/start", "/api/recording/stop", "/api/mode", "/api/session/start", "/api/session/stop",
        "/api/flash", "/api/torch", "/api/camera", "/api/webrtc/offer", "/api/webrtc/answer", "/api/webrtc/close",
    ]

    /// The token, the Host (loopback without a token: DNS rebinding) and the Origin of changing requests.
    func admit(_ request: HTTPRequest) -> HTTPResponse? {
        if let token {
            let bearer = request.header("Authorization").flatMap { value -> String? in
                value.lowercased().hasPrefix("bearer ") ? String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces) : nil
            }
            guard let given = bearer ?? request.query["token"], Self.constantTimeEqual(given, token) else {
                var response = HTTPResponse.error(.unauthorized, "unauthorized", "this server needs its token: Authorization: Bearer TOKEN, or ?token=TOKEN")
                response.headers.append(("WWW-Authenticate", "Bearer"))
                return response
            }
        } else {
            let host = (request.header("Host") ?? "").lowercased()
            let address = http.address, port = address.port
            // The loopback names, and the loopback address listened on (127.0.0.2 ... as the URL shows it).
            let listened = address.host.contains(":") ? "[\(address.host)]:\(port)" : "\(address.host):\(port)"
            let allowed = ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", listened]
            guard allowed.contains(host) else {
                return .error(
                    .forbidden, "forbidden-host", "open the page as http://127.0.0.1:\(port)/ (Host '\(FileNaming.printable(host))' is not this machine's)")
            }
        }
        if request.method != "GET", let origin = request.header("Origin") {
            let host = request.header("Host") ?? ""
            guard origin == "http://\(host)" else {
                return .error(.forbidden, "forbidden-origin", "requests that change the session come from this server's own page")
            }
        }
        return nil
    }

    /// Compares in time that depends only on the lengths.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }

    // MARK: State

    var controller: SessionController? { controllerSource() }
    var session: CaptureSession? { controller?.session }

    var movieOutput: CaptureMovieFileOutput? { controller?.movieOutput }
    var photoOutput: CapturePhotoOutput? { controller?.photoOutput }

    /// `video` while the session has a movie output, else `photo`.
    var mode: String { (controller?.mode ?? .photo).rawValue }

    func status() -> [String: Any] {
        let controller = self.controller
        let session = controller?.session
        let camera = controller?.camera
        let movie = movieOutput
        let overlay = controller?.overlayState
        var result: [String: Any] = [
            "running": session?.isRunning ?? false,
            "mode": mode,
            "recording": movie?.isRecording ?? false,
            "recordingSeconds": movie.map { $0.isRecording ? $0.recordedDuration.seconds : 0 } ?? 0,
            "photo": photoOutput != nil,
            "codes": session?.outputs.contains { $0 is CaptureMetadataOutput } ?? false,
            "viewers": ["mjpeg": jpeg.viewerCount, "webrtc": webrtc.viewerCount],
            "webrtc": CaptureWebRTCPreviewOutput.isAvailable,
        ]
        if let camera {
            let device = camera.device
            result["camera"] = [
                "name": device.localizedName, "id": device.uniqueID, "label": overlay?.camera ?? camera.name,
                "switchable": CaptureDevice.camera(after: device) != nil,
            ]
            result["flash"] = ["available": device.hasFlash, "mode": (overlay?.flashMode ?? device.flashMode).rawValue]
            result["torch"] = ["available": device.hasTorch, "on": device.hasTorch && device.torchMode == .on]
        }
        if let error = jpeg.lastError ?? webrtc.lastError { result["previewError"] = error }
        if let epoch = webrtc.output?.clockEpoch { result["clockEpoch"] = epoch * 1000 }
        return result
    }

    func mediaList(limit: Int) -> [[String: Any]] {
        catalog.items(limit: max(1, limit)).map { item in
            [
                "name": item.id, "kind": item.kind.rawValue, "size": item.size, "modified": item.modified.timeIntervalSince1970,
                "url": Self.mediaURL(item.id),
            ]
        }
    }

    /// Percent-escapes everything but unreserved characters.
    static func pathEscape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case 48...57, 65...90, 97...122, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    // MARK: Actions

    /// Performs one command through the controller, as a remote caller: the answer is the session's
    /// status and what the command made (`photo`, `recording`, ...); an error is the HTTP status
    /// `status(for:)` gives it.
    func perform(_ command: ControlCommand) async -> HTTPResponse {
        guard let controller else { return .error(.conflict, "not-running", "the session is not set up") }
        do throws(CaptureError) {
            let result = try await controller.perform(command, as: .remote)
            var body: [String: Any] = ["ok": true, "status": status()]
            for (key, value) in Self.fields(of: result, in: controller.folders) { body[key] = value }
            return .json(body)
        } catch {
            return Self.failureResponse(error)
        }
    }

    /// What a command made, for the page: files by their name in the output folder and their URL.
    static func fields(of result: ControlResult, in folders: SessionFolders) -> [String: Any] {
        func file(_ path: String) -> [String: Any] {
            let name = folders.mediaName(of: path)
            return ["name": name, "url": mediaURL(name)]
        }
        switch result {
        case .done: return [:]
        case .photos(let photos): return ["photos": photos.compactMap(\.location).map(file)]
        case .recordingStarted(let output, let location): return ["recording": ["output": output, "file": file(location)]]
        case .recordingStopped(let output, let result):
            return ["recording": ["output": output, "file": file(result.location), "duration": result.duration.seconds, "success": result.success]]
        case .recordingPaused(let output, let location, let duration), .recordingResumed(let output, let location, let duration):
            return ["recording": ["output": output, "file": file(location), "duration": duration.seconds]]
        case .mode(let mode): return ["mode": mode.rawValue]
        case .flashMode(let mode): return ["flashMode": mode.rawValue]
        case .torch(let on): return ["torch": on]
        case .camera(let input): return ["camera": ["name": input.device.localizedName, "id": input.device.uniqueID]]
        case .trimmed(let result, _):
            return [
                "file": file(result.location), "duration": result.duration, "source": file(result.source),
                "from": result.requestedStart, "to": result.requestedEnd, "mode": result.mode.rawValue,
            ]
        case .thumbnail(let source, let location, let image):
            return [
                "file": file(location), "source": file(source), "width": image.width, "height": image.height,
                "time": image.requestedTime, "actualTime": image.actualTime,
            ]
        case .picked(let name, let item):
            var picked: [String: Any] = ["name": name, "file": file(item.path), "kind": item.kind.rawValue, "size": item.size]
            if let width = item.width, let height = item.height { (picked["width"], picked["height"]) = (width, height) }
            if let duration = item.duration { picked["duration"] = duration }
            return ["picked": picked]
        }
    }

    /// The HTTP status of a session error: 409 for what the session's state refuses now, 403 for what
    /// a remote caller may not name, 503 for a device that cannot be used, 400 for a request that
    /// cannot be performed as given, 500 otherwise.
    static func status(for error: CaptureError) -> HTTPStatus {
        switch error {
        case .notRunning, .recordingInProgress, .notRecording, .invalidConfiguration, .alreadyRunning, .startInsideConfiguration,
            .noRecordingYet, .duplicateName, .outputAlreadyInSession, .inputAlreadyInSession:
            .conflict
        case .notPermitted:
            .forbidden
        case .deviceNotFound, .deviceBusy, .noDeviceAvailable, .flashNotSupported, .controlNotSupported, .deviceLocked, .deviceDisconnected, .busy:
            .unavailable
        case .unknownOutput, .unknownInput, .unknownOverlay, .invalidLocation, .invalidTimeRange, .timeOutOfRange, .fileAlreadyExists,
            .notAMediaFile, .invalidPhotoSettings, .noFrameInRange, .videoNotCompatible, .libraryItemNotFound:
            .badRequest
        default:
            .internalError
        }
    }

    static func failureResponse(_ error: CaptureError) -> HTTPResponse {
        .error(status(for: error), error.name, error.description)
    }

    func photo() async -> HTTPResponse {
        guard photoOutput != nil else { return .error(.conflict, "no-photo-output", "the session has no photo output") }
        return await perform(.takePhoto(PhotoRequest()))
    }

    func recording(start: Bool) async -> HTTPResponse {
        guard movieOutput != nil else {
            return .error(.conflict, "not-in-video-mode", "switch to video mode first: POST /api/mode with {\"mode\": \"video\"}")
        }
        return await perform(start ? .startRecording(output: nil, location: nil) : .stopRecording(output: nil))
    }

    /// Photo <-> video: the controller's mode switch, one configuration block on the running session.
    func switchMode(to wanted: String) async -> HTTPResponse {
        guard let mode = CaptureMode(rawValue: wanted) else { return .error(.badRequest, "bad-request", "a mode is photo or video") }
        return await perform(.switchMode(mode))
    }
}
