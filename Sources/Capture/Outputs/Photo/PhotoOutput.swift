import Foundation
import GStreamer
import Synchronization

/// Still photos, like `AVCapturePhotoOutput` (and the older `AVCaptureStillImageOutput`).
///
/// The branch is idle between captures: a gate at the head of the branch drops every frame until a
/// request arrives, then lets exactly one frame through to the encoder per request. With
/// zero-shutter-lag the gate keeps the last few frames and sends the one nearest the request time.
public final class CapturePhotoOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); settings and requests are
    // behind `Locked`, counters are atomics.
    /// Defaults applied to requests that do not say otherwise.
    public struct Defaults: Sendable {
        /// The codec of the shot `capture compile` shows the encoder pipeline for; each request's settings give their own.
        public var codec: PhotoCodec = .jpeg
        /// The JPEG quality of the shot `capture compile` shows; each request's settings give their own.
        public var quality: Int = 90
        /// The still's size when a request gives none (nil: the session preset's size).
        public var size: Size?
        /// Where photos are saved when a request gives no location (nil: not saved).
        public var location: String?
        /// True to keep the last few frames and take the one nearest the request time, which may be before the
        /// request (a negative shutter lag); false to take the first frame after it.
        public var zeroShutterLag = false
        /// The crop of a request that gives none (normalized to the frame; nil: the whole frame): the
        /// picker's editing step applied to every shot.
        public var crop: NormalizedRect?
        /// The library every photo is also saved to (`save-to-library`; nil: none), as `IMG_NNNN.jpg`;
        /// the `saved-to-library` event says where, or why not.
        public var library: MediaLibrary?
        /// Replace the file at a plain location (no `%d`) when one is there, instead of saving the
        /// photo under the next free name (`name-1.jpg`), as `MovieSettings.overwritesExistingFile` does
        /// for movies (`overwrite` in a `.pipeline` file). Only a regular file is replaced, and only
        /// once the new photo is whole. False by default: nothing a photo output did not write is lost.
        public var overwritesExistingFile = false
        /// How long a request waits for a frame, and then for its processing and encoding. When no
        /// frame at all reaches the output meanwhile (the camera is starting, or restarting for a new
        /// format), the request waits 10 s more for one before it fails.
        public var captureTimeout: Duration = .seconds(5)
        /// No location, crop or library; JPEG at quality 90, no zero shutter lag, a 5 s capture timeout.
        public init() {}
    }

    private final class Request: @unchecked Sendable {
        // Fields are written before the request is shared, then only read; `frameTime` is written by
        // the gate before the request moves to the in-flight list, under the output's lock.
        let settings: PhotoSettings
        let resolved: ResolvedPhotoSettings
        let requestTime: UInt64?
        let delegate: CapturePhotoCaptureDelegate?
        let promise = Promise<Photo>()
        var frameTime: UInt64?
        /// The flash fired for this shot: the frame must be captured after it, and the LED goes back
        /// once the frame is taken (or the request fails).
        let flash: Flash?
        init(settings: PhotoSettings, resolved: ResolvedPhotoSettings, requestTime: UInt64?, delegate: CapturePhotoCaptureDelegate?, flash: Flash? = nil) {
            self.settings = settings
            self.resolved = resolved
            self.requestTime = requestTime
            self.delegate = delegate
            self.flash = flash
        }
    }

    /// A flash fired for one shot through the device's V4L2 flash controls (`flash_led_mode` flash,
    /// `flash_strobe`), released once (`flash_strobe_stop`, the LED mode it had).
    final class Flash: Sendable {
        let device: CaptureDevice
        let previousLEDMode: Int64
        /// Running time after the strobe: frames with an earlier timestamp were captured without it.
        let firedAt: UInt64?
        private let released = Atomic<Bool>(false)

        init(device: CaptureDevice, previousLEDMode: Int64, firedAt: UInt64?) {
            self.device = device
            self.previousLEDMode = previousLEDMode
            self.firedAt = firedAt
        }

        /// Puts the LED back (an ioctl: never call it on a streaming thread). Once.
        func release() {
            guard !released.exchange(true, ordering: .relaxed) else { return }
            DeviceControlHub.shared.releaseFlash(device, ledMode: previousLEDMode)
        }
    }
    /// Where flashes are released after their frame (the gate runs on a streaming thread).
    private let flashQueue = DispatchQueue(label: "capture.photo-output.flash")

    /// What the compiler told the output about its input when the branch was built.
    private struct BranchInfo: Sendable {
        var frameSize: Size
        var outputSize: Size
        var connection: ConnectionSettings
        var device: CaptureDevice?
        /// The raw format of the frames the gate sees (nil: decoded from JPEG, planar YUV).
        var pixelFormat: String? = nil
        /// The device has a flash: the gate meters every frame for `auto`.
        var meters = false
    }

    private struct Runtime {
        var pending: [Request] = []
        var inFlight: [Request] = []
        var ring: [Buffer] = []
        /// Frames that reached the gate since the output was made.
        var frames = 0
        /// The mean luma (0...1) of the last frame the gate metered (`SceneMeter`), and the shots
        /// in `auto` waiting for a first one.
        var luma: Double?
        var lumaWaiters: [Promise<Double>] = []
    }

    /// How much longer than `captureTimeout` a request waits when no frame at all reached the output
    /// meanwhile: a camera that is starting, or restarting for a new format (a 4K mode's first frame
    /// can take seconds), has not failed yet.
    static let firstFrameAllowance = Duration.seconds(10)

    private let defaultsState = Locked(Defaults())
    private let info = Locked<BranchInfo?>(nil)
    private let runtime = Locked(Runtime())
    private let delegateQueue = DispatchQueue(label: "capture.photo-output")
    private let encoderFrames = Atomic<Int>(0)
    private let encoderState = Locked<PhotoEncoder?>(nil)
    /// Shots are encoded one at a time, in the order their frames were selected.
    private let encoding = CommandQueue(name: "capture.photo")

    /// Frames that reached the encoder since the output was made: exactly one per capture.
    public var encoderFrameCount: Int { encoderFrames.load(ordering: .relaxed) }
    static let ringSize = 4

    /// A photo output named `name`, with the default settings.
    public override init(name: String = "photo") { super.init(name: name) }

    /// `photo`.
    public override var kind: String { "photo" }

    /// The settings applied to requests that do not give their own.
    public var defaults: Defaults {
        get { defaultsState.value }
        set { defaultsState.value = newValue }
    }

    /// True while any request is waiting for its frame or its encoding.
    public var isCapturingStillImage: Bool {
        runtime.withLock { !$0.pending.isEmpty || !$0.inFlight.isEmpty }
    }

    /// Flash modes the connected device supports (`off` always; `on`/`auto` when it has a flash: a
    /// `flash_led_mode` with a flash item and a `flash_strobe`, read from the device now).
    public var supportedFlashModes: [FlashMode] {
        guard let device = info.value?.device, device.hasFlash else { return [.off] }
        return FlashMode.allCases
    }

    // MARK: Branch

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        if let location = defaults.location { try FileNaming.checkLocation(location) }
        guard let input = context.videoInput, input.format?.device.size != nil else {
            throw .noVideoInput(output: name)
        }
        // The branch only selects frames; each selected frame is encoded by a small encoder pipeline of
        // its own, so a shot's size, crop or codec never renegotiates anything the camera feeds.
        let elements: [ElementSpec] = [
            ElementSpec("queue", name: "\(name)_queue", [("max-size-buffers", "1"), ("max-size-bytes", "0"), ("max-size-time", "0"), ("leaky", "downstream")]),
            ElementSpec("appsink", name: "\(name)_sink", [("sync", "false"), ("async", "false"), ("wait-on-eos", "false"), ("enable-last-sample", "false")]),
        ]
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: input.input, elements: elements)],
            auxiliaryFactories: PhotoEncoder.factories)
    }

    /// The frame geometry and connection shots are resolved against: the context of the graph that runs.
    override func configurationApplied(_ context: BranchContext?) {
        guard let context, let input = context.videoInput, let format = input.format, let frameSize = format.device.size else {
            info.value = nil
            return
        }
        let device = input.captureDevice
        info.value = BranchInfo(
            frameSize: frameSize, outputSize: format.outputSize, connection: context.connection, device: device,
            pixelFormat: format.device.mediaSubtype == "video/x-raw" ? format.device.pixelFormat : nil, meters: device?.hasFlash ?? false)
    }

    /// The encoder pipeline a shot with the output's default settings runs in, given the compiled
    /// session (for `capture compile`); nil when the output has no branch in it. Pure: reads the graph
    /// and the settings, writes nothing.
    func encoderLaunch(in graph: CompiledGraph) throws(CaptureError) -> String? {
        guard let branch = graph.branches.first(where: { $0.output == name }), let input = branch.inputs.first,
            let source = graph.sources.first(where: { $0.input == input }), let format = source.format,
            let frameSize = format.device.size
        else { return nil }
        let info = BranchInfo(frameSize: frameSize, outputSize: format.outputSize, connection: connection, device: source.captureDevice)
        let defaults = self.defaults
        let resolved = try resolve(PhotoSettings(codec: defaults.codec, quality: defaults.quality), info: info)
        // The frames reach the encoder as the source delivers them (decoded when the device sends JPEG).
        var caps = "video/x-raw"
        if format.device.mediaSubtype == "video/x-raw", let pixel = format.device.pixelFormat { caps += ",format=\(pixel)" }
        caps += ",width=\(frameSize.width),height=\(frameSize.height),framerate=\(format.frameRate.caps)"
        return PhotoEncoder.description(for: resolved, connection: connection, inputCaps: caps)
    }

    /// Photos take one frame on request (from the zero-shutter-lag ring): a frame the driver dropped is
    /// not a photo lost, so nothing is reported.
    override func sourceDroppedFrames(_ count: Int) {}

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        // Weak: the probe lives in the branch, and the handle owns the branch.
        handle.element("\(name)_queue")?.staticPad("src")?.addProbe(.buffer) { [weak self, weak handle] _, probe in
            guard let self, let handle else { return .drop }
            return self.gate(probe, handle: handle)
        }
        handle.element("\(name)_sink")?.setAppSinkCallbacks(onSample: { [weak self] sample in
            self?.selected(Sample(sample))
        })
    }

    override func detach() {
        super.detach()
        encoderState.value = nil
        let abandoned = runtime.withLock { runtime -> [Request] in
            defer { runtime = Runtime() }
            return runtime.pending + runtime.inFlight
        }
        for request in abandoned { finish(request, .failure(.notRunning(object: description))) }
    }

    // MARK: Capturing

    /// Takes a photo. Returns when it is encoded (and saved, when a location applies). Typed errors:
    /// not running, invalid settings, unwritable location, full disk, timeout. The session keeps
    /// running whatever happens to one request.
    ///
    /// ```swift
    /// let photos = CapturePhotoOutput(name: "photo")
    /// try session.addOutput(photos)
    /// try await session.startRunning()
    /// let photo = try await photos.capturePhoto(with: PhotoSettings(size: Size(width: 1280, height: 720), location: "IMG_%04d.jpg"))
    /// print(photo.width, photo.height, photo.location ?? "not saved")
    /// ```
    public func capturePhoto(with settings: PhotoSettings = PhotoSettings(), delegate: CapturePhotoCaptureDelegate? = nil) async throws(CaptureError) -> Photo {
        let request: Request
        do throws(CaptureError) {
            guard let handle = handleState.value, let info = info.value else { throw CaptureError.notRunning(object: description) }
            var resolved = try resolve(settings, info: info)
            try prepareLocation(resolved.location)
            // `auto` fires when the scene is dark: the mean luma of the frame the gate saw last.
            resolved.isFlashEnabled = resolved.flashMode == .on
            if resolved.flashMode == .auto, info.meters {
                resolved.isFlashEnabled = try await sceneLuma() < SceneMeter.flashThreshold
            }
            var flash: Flash?
            if resolved.isFlashEnabled, let device = info.device {
                let previous = try DeviceControlHub.shared.fireFlash(device)
                flash = Flash(device: device, previousLEDMode: previous, firedAt: handle.runningTime)
            }
            request = Request(settings: settings, resolved: resolved, requestTime: handle.runningTime, delegate: delegate, flash: flash)
        } catch {
            delegateQueue.async { delegate?.photoOutput(self, didFinishProcessingPhoto: .failure(error)) }
            throw error
        }
        delegateQueue.async { delegate?.photoOutput(self, willBeginCaptureFor: request.resolved) }
        let framesBefore = runtime.withLock { runtime -> Int in
            runtime.pending.append(request)
            return runtime.frames
        }
        let timeout = defaults.captureTimeout
        let longest = timeout + max(Self.firstFrameAllowance, timeout)
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, let self else { return }
            var waited = timeout
            let (waiting, noFrame) = self.runtime.withLock { runtime in
                (runtime.pending.contains { $0 === request }, runtime.frames == framesBefore)
            }
            // No frame at all since the request: the camera is (re)starting; it gets the allowance.
            // A frame already chosen: its processing and encoding get `captureTimeout` of their own
            // (the encoder also bounds its part), so a frame that came late is not failed mid-way.
            let more: Duration? = waiting ? (noFrame ? Self.firstFrameAllowance : nil) : timeout
            if let more {
                try? await Task.sleep(for: more)
                guard !Task.isCancelled else { return }
                waited += more
            }
            self.runtime.withLock { $0.pending.removeAll { $0 === request } }
            self.finish(request, .failure(.captureTimedOut(output: self.name, seconds: waited.seconds)))
        }
        defer { timer.cancel() }
        return try await request.promise.value(timeout: longest + .seconds(1), timeoutError: .captureTimedOut(output: name, seconds: longest.seconds))
    }

    /// The mean luma of the scene: the last frame's, or the next one's (bounded like a shot's wait).
    private func sceneLuma() async throws(CaptureError) -> Double {
        let promise = Promise<Double>()
        if let known = runtime.withLock({ runtime -> Double? in
            if runtime.luma == nil { runtime.lumaWaiters.append(promise) }
            return runtime.luma
        }) {
            return known
        }
        let longest = defaults.captureTimeout + Self.firstFrameAllowance
        return try await promise.value(timeout: longest, timeoutError: .captureTimedOut(output: name, seconds: longest.seconds))
    }

    /// Takes several photos, one per frame, each matched to its own settings.
    public func capturePhotos(_ settings: [PhotoSettings]) async -> [Result<Photo, CaptureError>] {
        await withTaskGroup(of: (Int, Result<Photo, CaptureError>).self) { group in
            for (index, item) in settings.enumerated() {
                group.addTask {
                    // The result is whole before the tuple is made. With `return (index, try await ...)`
                    // Swift 6.3's optimizer wrote `index` before the suspension and lost it: release
                    // builds read garbage indexes and trapped below.
                    let result: Result<Photo, CaptureError>
                    do throws(CaptureError) { result = .success(try await self.capturePhoto(with: item)) } catch { result = .failure(error) }
                    return (index, result)
                }
            }
            var results = [Result<Photo, CaptureError>?](repeating: nil, count: settings.count)
            for await (index, result) in group { results[index] = result }
            // The group fills every index once.
            return results.map { $0! }
        }
    }

    /// Checks and resolves a request against the frame the branch receives.
    private func resolve(_ settings: PhotoSettings, info: BranchInfo) throws(CaptureError) -> ResolvedPhotoSettings {
        guard (1...100).contains(settings.quality) else {
            throw .invalidPhotoSettings(output: name, reason: "quality must be 1...100, not \(settings.quality)")
        }
        if settings.flashMode == .on && !supportedFlashModes.contains(.on) {
            throw .flashNotSupported(device: info.device?.uniqueID ?? "the camera")
        }
        let frame = info.frameSize
        let crop = settings.crop ?? defaults.crop ?? .full
        guard crop.isValid else {
            throw .invalidPhotoSettings(output: name, reason: "crop \(crop) must lie inside <0, 0, 1, 1> with a positive size")
        }
        // The crop in device pixels (even values keep chroma planes aligned).
        var left = Int((crop.x * Double(frame.width)).rounded()) & ~1
        var top = Int((crop.y * Double(frame.height)).rounded()) & ~1
        var width = Int((crop.width * Double(frame.width)).rounded()) & ~1
        var height = Int((crop.height * Double(frame.height)).rounded()) & ~1
        guard width >= 16, height >= 16 else {
            throw .invalidPhotoSettings(output: name, reason: "crop \(crop) leaves less than 16x16 pixels of the \(frame) frame")
        }
        // Without an explicit size: the preset's scale applied to the cropped region.
        let scale = Double(info.outputSize.width) / Double(frame.width)
        let requested = settings.size ?? defaults.size
        // Without a size or a crop the photo has the session preset's size; with only a crop, the preset's
        // scale applied to the cropped region.
        let target =
            requested
            ?? (settings.crop == nil && defaults.crop == nil
                ? info.outputSize
                : Size(width: max(16, Int(Double(width) * scale) & ~1), height: max(16, Int(Double(height) * scale) & ~1)))
        guard target.width >= 16, target.height >= 16 else {
            throw .invalidPhotoSettings(output: name, reason: "size \(target) is below the 16x16 minimum")
        }
        guard target.width <= width, target.height <= height else {
            throw .invalidPhotoSettings(
                output: name, reason: "size \(target) is larger than the \(width)x\(height) region of the camera's \(frame) frame; upscaling is refused")
        }
        // Center-crop the region to the target's aspect ratio, then scale.
        let targetAspect = Double(target.width) / Double(target.height)
        if Double(width) / Double(height) > targetAspect {
            let fitted = Int(Double(height) * targetAspect) & ~1
            left += (width - fitted) / 2 & ~1
            width = fitted
        } else {
            let fitted = Int(Double(width) / targetAspect) & ~1
            top += (height - fitted) / 2 & ~1
            height = fitted
        }
        let rotated = info.connection.rotation == 90 || info.connection.rotation == 270
        let location = settings.location ?? defaults.location
        if let location { try FileNaming.checkLocation(location) }
        return ResolvedPhotoSettings(
            uniqueID: settings.uniqueID, codec: settings.codec, quality: settings.quality,
            size: rotated ? Size(width: target.height, height: target.width) : target,
            cropLeft: left, cropTop: top, cropRight: frame.width - left - width, cropBottom: frame.height - top - height,
            flashMode: settings.flashMode == .auto && !supportedFlashModes.contains(.auto) ? .off : settings.flashMode,
            location: location.map { FileNaming.withExtension($0, settings.codec) }, tags: settings.tags,
            overwritesExistingFile: defaults.overwritesExistingFile && location.map(FileNaming.isPattern) == false)
    }

    /// Refuses a location that cannot be written before the shot is taken.
    private func prepareLocation(_ location: String?) throws(CaptureError) {
        guard let location else { return }
        try FileNaming.prepareFolder(for: location)
    }

    // MARK: Streaming thread

    /// The gate: runs for every frame on the branch's streaming thread. Drops frames unless a request
    /// waits; then configures the encoder side for that request and lets one frame through.
    private func gate(_ probe: PadProbeInfo, handle: BranchHandle) -> PadProbeReturn {
        guard let view = probe.buffer else { return .ok }
        let zeroShutterLag = defaults.zeroShutterLag
        var waiters: [Promise<Double>] = []
        var luma: Double?
        if let meter = info.value, meter.meters {
            let size = meter.frameSize
            luma = view.withBytes { SceneMeter.meanLuma($0, pixelFormat: meter.pixelFormat, width: size.width, height: size.height) } ?? nil
        }
        defer { if let luma { for waiter in waiters { waiter.succeed(luma) } } }
        var chosen: Request?
        var replacement: Buffer?
        runtime.withLock { runtime in
            runtime.frames += 1
            if let luma {
                runtime.luma = luma
                swap(&waiters, &runtime.lumaWaiters)
            }
            if zeroShutterLag {
                runtime.ring.append(Buffer(view))
                if runtime.ring.count > Self.ringSize { runtime.ring.removeFirst() }
            } else if !runtime.ring.isEmpty {
                runtime.ring.removeAll()
            }
            while let first = runtime.pending.first, first.promise.isFulfilled { runtime.pending.removeFirst() }
            guard let head = runtime.pending.first else { return }
            // A flash shot takes a frame captured after the strobe, never an earlier one.
            if let firedAt = head.flash?.firedAt, let pts = view.pts, pts < firedAt { return }
            let request = runtime.pending.removeFirst()
            var frameTime = view.pts
            if zeroShutterLag, request.flash == nil, let wanted = request.requestTime {
                let nearest = runtime.ring.min { abs(Int64(bitPattern: ($0.view.pts ?? 0) &- wanted)) < abs(Int64(bitPattern: ($1.view.pts ?? 0) &- wanted)) }
                if let nearest, nearest.view.buffer != view.buffer {
                    replacement = nearest
                    frameTime = nearest.view.pts
                }
            }
            request.frameTime = frameTime
            runtime.inFlight.append(request)
            chosen = request
        }
        guard let request = chosen else { return .drop }
        if let replacement { probe.replaceBuffer(with: replacement) }
        if let flash = request.flash { flashQueue.async { flash.release() } }
        delegateQueue.async {
            request.delegate?.photoOutput(self, willCapturePhotoFor: request.resolved)
            request.delegate?.photoOutput(self, didCapturePhotoFor: request.resolved)
        }
        handle.post(.photoCaptured(output: name, id: request.resolved.uniqueID))
        return .ok
    }

    /// A selected frame arrived (branch streaming thread): match it to the oldest in-flight request and
    /// queue its encoding.
    private func selected(_ sample: Sample) {
        let request = runtime.withLock { runtime -> Request? in
            runtime.inFlight.isEmpty ? nil : runtime.inFlight.removeFirst()
        }
        guard let request, !request.promise.isFulfilled else { return }
        encoding.submit { [weak self] in
            guard let self else { return }
            do throws(CaptureError) {
                let encoded = try await self.encode(sample, for: request.resolved)
                guard let bytes = encoded.view.buffer?.withBytes({ Array($0) }) else {
                    throw .pipelineBuildFailed(object: self.description, reason: "the encoder gave an empty buffer")
                }
                let structure = encoded.view.capsStructure
                self.complete(
                    request, bytes: bytes, width: structure?.int("width") ?? request.resolved.size.width,
                    height: structure?.int("height") ?? request.resolved.size.height,
                    frameTime: request.frameTime, requestTime: request.requestTime)
            } catch {
                self.finish(request, .failure(error))
            }
        }
    }

    /// Encodes one frame, reusing the encoder pipeline while the shot's pixel settings stay the same.
    private func encode(_ sample: Sample, for resolved: ResolvedPhotoSettings) async throws(CaptureError) -> Sample {
        let connection = info.value?.connection ?? ConnectionSettings()
        let elements = PhotoEncoder.elements(for: resolved, connection: connection, inputCaps: sample.capsDescription ?? "")
        let turn = connection.rotatesPixels ? PixelTurn.none : connection.turn
        let encoder: PhotoEncoder
        if let current = encoderState.value, current.elements == elements, current.shownTurned == turn {
            encoder = current
        } else {
            encoderState.value = nil
            encoder = try PhotoEncoder(elements: elements, owner: self.description, overlays: overlayCanvas, shownTurned: turn)
            encoderState.value = encoder
        }
        encoderFrames.add(1, ordering: .relaxed)
        let tags = resolved.codec == .jpeg ? PhotoMetadata.tagList(metadata(for: resolved)) : nil
        do {
            return try await encoder.encode(sample, tags: tags, timeout: defaults.captureTimeout)
        } catch {
            encoderState.value = nil
            throw error
        }
    }

    private func complete(_ request: Request, bytes: [UInt8], width: Int, height: Int, frameTime: UInt64?, requestTime: UInt64?) {
        let resolved = request.resolved
        let metadata = metadata(for: resolved)
        let data =
            resolved.codec == .png
            ? PhotoMetadata.addingPNGText(metadata, to: bytes)
            : PhotoMetadata.addingJPEGComment(metadata["Comment"], to: bytes)
        var saved: String?
        if let location = resolved.location {
            do {
                saved = try resolved.overwritesExistingFile ? FileNaming.writeReplacing(data, to: location) : FileNaming.writeNew(data, to: location)
            } catch {
                finish(request, .failure(error))
                return
            }
        }
        let lag = frameTime.flatMap { frame in requestTime.map { Double(Int64(bitPattern: frame &- $0)) / 1e9 } } ?? 0
        let photo = Photo(
            fileDataRepresentation: data, width: width, height: height, timestamp: Double(frameTime ?? 0) / 1e9,
            shutterLag: lag, resolvedSettings: resolved, metadata: metadata, location: saved)
        if let saved { handleState.value?.post(.photoSaved(output: name, id: resolved.uniqueID, location: saved, width: width, height: height)) }
        if let library = defaults.library {
            let result: Result<MediaLibrary.Item, CaptureError>
            do throws(CaptureError) { result = .success(try library.saveNow(photoBytes: data, extension: resolved.codec.fileExtension)) } catch {
                result = .failure(error)
            }
            handleState.value?.post(.savedToLibrary(output: name, source: saved ?? "", result))
        }
        finish(request, .success(photo))
    }

    private func finish(_ request: Request, _ result: Result<Photo, CaptureError>) {
        guard !request.promise.isFulfilled else { return }
        request.promise.fulfill(result)
        if let flash = request.flash { flashQueue.async { flash.release() } }
        let delegate = request.delegate
        let resolved = request.resolved
        delegateQueue.async {
            delegate?.photoOutput(self, didFinishProcessingPhoto: result)
            if case .failure(let error) = result {
                delegate?.photoOutput(self, didFinishCaptureFor: resolved, error: error)
            } else {
                delegate?.photoOutput(self, didFinishCaptureFor: resolved, error: nil)
            }
        }
    }

    /// The tags a shot carries: capture date, device make and model, orientation, software and the
    /// request's own tags.
    private func metadata(for resolved: ResolvedPhotoSettings) -> [String: String] {
        let device = info.value?.device
        let connection = info.value?.connection ?? ConnectionSettings()
        var tags: [String: String] = [
            "DateTime": PhotoMetadata.timestamp(Date()),
            "Software": "capture \(CaptureVersion.string)",
            // How to show the pixels: the connection's turn, unless it turned them already.
            "Orientation": "\(connection.rotatesPixels ? 1 : connection.turn.exifOrientation)",
            "Make": device?.properties["device.vendor.name"] ?? (device?.isVirtual == true ? "capture" : "unknown"),
            "Model": device?.properties["device.product.name"] ?? device?.localizedName ?? "unknown",
        ]
        if let latitude = resolved.tags.latitude { tags["GPSLatitude"] = String(latitude) }
        if let longitude = resolved.tags.longitude { tags["GPSLongitude"] = String(longitude) }
        if let altitude = resolved.tags.altitude { tags["GPSAltitude"] = String(altitude) }
        if let comment = resolved.tags.comment { tags["Comment"] = comment }
        if let description = resolved.tags.description { tags["Description"] = description }
        tags["FlashMode"] = resolved.flashMode.rawValue
        tags["Flash"] = resolved.isFlashEnabled ? "fired" : "did not fire"
        return tags
    }
}

/// The library's version, written into files it makes.
extension FileNaming {
    /// Gives a location without an extension the codec's one.
    public static func withExtension(_ location: String, _ codec: PhotoCodec) -> String {
        URL(fileURLWithPath: location).pathExtension.isEmpty ? location + "." + codec.fileExtension : location
    }

    /// Refuses an image location whose extension names the other format (`q.jpg` for PNG bytes): a
    /// file's name must not lie about what it holds. Other extensions, and none, are left to the caller.
    public static func checkImageExtension(_ location: String, _ codec: PhotoCodec) throws(CaptureError) {
        let named: PhotoCodec? =
            switch URL(fileURLWithPath: location).pathExtension.lowercased() {
            case "png": .png
            case "jpg", "jpeg": .jpeg
            default: nil
            }
        if let named, named != codec {
            throw .invalidLocation(
                path: location,
                reason: "its extension says \(named.rawValue) but the image is \(codec.rawValue); name it .\(codec.fileExtension) or choose that codec")
        }
    }
}
