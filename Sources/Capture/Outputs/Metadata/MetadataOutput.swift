import Foundation
import GStreamer
import Synchronization

/// Receives the codes of a `CaptureMetadataOutput`, like `AVCaptureMetadataOutputObjectsDelegate`.
/// Called on the queue given to `setMetadataObjectsDelegate(_:queue:)`.
public protocol CaptureMetadataOutputObjectsDelegate: AnyObject, Sendable {
    /// With `delivery` `.appearances` (the default): codes that came into view in one frame, once per
    /// appearance (not again while a code stays in view, and again after it has left and come back).
    /// With `.everyFrame`, as on iOS: every code read in a decoded frame, with its corners in that
    /// frame, for each frame in which codes are read; then once an empty list when none is left.
    func metadataOutput(_ output: CaptureMetadataOutput, didOutput objects: [MetadataMachineReadableCodeObject])
    /// Codes that left the view (missed for `disappearanceInterval` and `disappearanceFrames`), or
    /// were in view when the output left the running pipeline.
    func metadataOutput(_ output: CaptureMetadataOutput, didLose objects: [MetadataMachineReadableCodeObject])
}

extension CaptureMetadataOutputObjectsDelegate {
    /// Does nothing by default.
    public func metadataOutput(_ output: CaptureMetadataOutput, didLose objects: [MetadataMachineReadableCodeObject]) {}
}

/// Reads machine-readable codes (QR, EAN, PDF417 ...) in the video, like `AVCaptureMetadataOutput`.
///
/// The output is a branch of the session's pipeline like any other: a leaky queue (it never holds
/// back the preview or a recording), a frame-rate limit, conversion to grey, and an appsink. Frames
/// are decoded on the output's own thread (`BarcodeWorker`: not a Dispatch queue, lower CPU
/// priority), off the streaming thread, one at a time, each with zxing-cpp's quick look and one of
/// its costlier passes in turn (see `BarcodeReader`): a frame that arrives while the previous one is still being
/// decoded is dropped, never queued (`droppedFrameCount`). Only the rect of interest is copied out
/// of the frame and decoded. With `discardsLateFrames` false, nothing is dropped: the branch waits
/// for the decoder, and the session's source with it (a recorded video is scanned whole, at the pace
/// the machine can decode it).
///
/// Results arrive through a delegate (`setMetadataObjectsDelegate(_:queue:)`), an AsyncSequence
/// (`metadataObjects()`), and the session event `code-detected`.
///
/// Differences from AVFoundation: `metadataObjectTypes` defaults to every available type (not to
/// none), a type the backend cannot read is a typed error instead of an exception, and by default a
/// code is reported when it appears rather than in every frame (`delivery = .everyFrame` reports as
/// iOS does).
public final class CaptureMetadataOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: settings and decoding state are behind `Locked`, counters are atomics.

    /// Which decoder library reads the codes (zbar, zxing-cpp or both).
    public typealias Backend = BarcodeBackend

    /// When the delegate hears of codes (`delivery`).
    public enum Delivery: String, Sendable, CaseIterable, Codable {
        /// Once when a code comes into view (`didOutput`), and when it leaves (`didLose`): what a
        /// scanner that acts on each code once wants. The default.
        case appearances
        /// As AVFoundation does: `didOutput` in every decoded frame in which codes are read, with all
        /// of them and their corners in that frame (an outline that follows the code), then once with
        /// an empty list when none is left. `didLose` and `code-detected` still come once a code.
        case everyFrame = "every-frame"
    }

    private struct Settings {
        var backend: Backend
        /// nil: every type the backend reads.
        var types: [MetadataObjectType]?
        var rectOfInterest = NormalizedRect.full
        var maxFrameRate: Double? = 15
        var size: Size?
        var disappearanceInterval = 0.5
        var disappearanceFrames = 3
        weak var delegate: CaptureMetadataOutputObjectsDelegate?
        var delegateQueue: DispatchQueue?
        var highlightOutputs: [String] = []
        var delivery = Delivery.appearances
        var discardsLateFrames = true
    }

    /// What the worker keeps between frames.
    private struct DecodeState {
        var reader: BarcodeReader?
        var tracker = BarcodeTracker(disappearanceInterval: 0.5, disappearanceFrames: 3)
        /// The corners last drawn on the highlight outputs.
        var highlighted: [[NormalizedPoint]] = []
        /// Per-frame delivery: the last frame delivered had codes (an empty list is owed when they go).
        var deliveredCodes = false
        /// Decoded frames so far: which of the decoder's costlier passes the next frame gets.
        var frameNumber = 0
    }

    private let settings: Locked<Settings>
    private let decodeState = Locked(DecodeState())
    private let broadcaster = Broadcaster<MetadataMachineReadableCodeObject>()
    private let frameBroadcaster = Broadcaster<[MetadataMachineReadableCodeObject]>()
    private let worker = BarcodeWorker(name: "capture.metadata-output.decode")
    private let delegateQueue = DispatchQueue(label: "capture.metadata-output.delegate")
    private let decoding = Atomic<Bool>(false)
    private let received = Atomic<Int>(0)
    private let decoded = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    /// The branch as last built does not discard late frames: the streaming thread waits for each decode.
    private let waitsForDecoder = Atomic<Bool>(false)
    /// Signalled when `decoding` becomes false (see `waitForTheDecoder`).
    private let decoderIdle = NSCondition()
    /// Changes when the output joins or leaves a running pipeline: a frame still being decoded from
    /// before the change reports nothing.
    private let generation = Atomic<Int>(0)

    /// A metadata output named `name` (unique in its session), reading with `backend`.
    public init(name: String = "metadata", backend: Backend = .auto) {
        settings = Locked(Settings(backend: backend))
        super.init(name: name)
    }

    deinit { worker.stop() }

    /// `metadata`.
    public override var kind: String { "metadata" }
    /// False: a metadata output's frames are never seen, so it takes no overlays.
    public override var acceptsOverlays: Bool { false }

    // MARK: Types

    /// The decoder library; change it with `setBackend(_:)`.
    public var backend: Backend { settings.value.backend }

    /// Chooses the decoder library. When explicit `metadataObjectTypes` were set, each must be
    /// readable by the new backend, or this throws `metadata-object-type-not-available` naming the
    /// first that is not. Takes effect with the next frame.
    public func setBackend(_ backend: Backend) throws(CaptureError) {
        let refusal = settings.withLock { settings -> CaptureError? in
            if let types = settings.types {
                do throws(BarcodeError) { try backend.checkReads(types, object: description) } catch { return CaptureError(error) }
            }
            settings.backend = backend
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Sets the backend by name (`auto`, `zbar`, `zxing`): an unknown name throws `invalid-configuration`.
    public func setBackend(named name: String) throws(CaptureError) {
        let backend: Backend
        do throws(BarcodeError) { backend = try Backend(named: name) } catch { throw CaptureError(error) }
        try setBackend(backend)
    }

    /// The types the backend can read, like `availableMetadataObjectTypes`.
    public var availableMetadataObjectTypes: [MetadataObjectType] { backend.availableTypes.sorted() }

    /// The types reported (default: every available type). Set them with `setMetadataObjectTypes(_:)`.
    public var metadataObjectTypes: [MetadataObjectType] {
        let current = settings.value
        return current.types ?? current.backend.availableTypes.sorted()
    }

    /// Restricts the types reported; each must be in `availableMetadataObjectTypes`, or this throws
    /// `metadata-object-type-not-available` naming it. Takes effect with the next frame.
    public func setMetadataObjectTypes(_ types: [MetadataObjectType]) throws(CaptureError) {
        var unique: [MetadataObjectType] = []
        for type in types where !unique.contains(type) { unique.append(type) }
        let refusal = settings.withLock { settings -> CaptureError? in
            do throws(BarcodeError) { try settings.backend.checkReads(unique, object: description) } catch { return CaptureError(error) }
            settings.types = unique
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Restricts the types by name (`qr`, `ean-13` ...): an unknown name throws
    /// `unknown-metadata-object-type`, an unavailable one `metadata-object-type-not-available`.
    public func setMetadataObjectTypes(named names: [String]) throws(CaptureError) {
        var types: [MetadataObjectType] = []
        for name in names {
            do throws(BarcodeError) { types.append(try MetadataObjectType(named: name)) } catch { throw CaptureError(error) }
        }
        try setMetadataObjectTypes(types)
    }

    /// Reports every type the backend reads again (the default).
    public func resetMetadataObjectTypes() {
        settings.withLock { $0.types = nil }
    }

    // MARK: Settings

    /// The part of the frame that is decoded, in normalized coordinates (default: the whole frame).
    /// Codes outside are not reported. Takes effect with the next frame; an invalid rectangle is
    /// refused at `commitConfiguration` (and clamped to the frame until then).
    public var rectOfInterest: NormalizedRect {
        get { settings[\.rectOfInterest] }
        set { settings[\.rectOfInterest] = newValue }
    }

    /// At most this many frames per second reach the decoder (default 15; nil: every frame).
    /// Takes effect at the next configuration commit.
    public var maxFrameRate: Double? {
        get { settings[\.maxFrameRate] }
        set { settings[\.maxFrameRate] = newValue }
    }

    /// The size frames are decoded at (nil: the session preset's size). Smaller decodes faster and
    /// reads fewer small codes. Takes effect at the next configuration commit.
    public var size: Size? {
        get { settings[\.size] }
        set { settings[\.size] = newValue }
    }

    /// When the delegate hears of codes: once per appearance (the default) or in every frame, as on
    /// iOS. Takes effect with the next frame.
    public var delivery: Delivery {
        get { settings.value.delivery }
        set { settings.withLock { $0.delivery = newValue } }
    }

    /// How long, in seconds of frame time, a code must be missed before it counts as gone (default 0.5).
    public var disappearanceInterval: Double {
        get { settings.value.disappearanceInterval }
        set { settings.withLock { $0.disappearanceInterval = max(0, newValue) } }
    }

    /// In how many decoded frames in a row a code must be missed before it counts as gone (default 3).
    public var disappearanceFrames: Int {
        get { settings.value.disappearanceFrames }
        set { settings.withLock { $0.disappearanceFrames = max(1, newValue) } }
    }

    /// True (the default): a frame that arrives while the decoder is busy is dropped
    /// (`droppedFrameCount`), so scanning never holds back the preview, a recording or the camera, and
    /// how many frames are decoded depends on the machine's load. False: every frame that reaches the
    /// output (at most `maxFrameRate` a second) is decoded, in order: the branch waits for the decoder,
    /// and the session's source waits with it. That is what scanning a recorded video (`file:`) wants,
    /// which then plays slower than real time on a busy machine; a camera's driver drops the frames
    /// the session does not take in time, for every output of the session. Like
    /// `AVCaptureVideoDataOutput.alwaysDiscardsLateVideoFrames`. Takes effect at the next
    /// configuration commit.
    public var discardsLateFrames: Bool {
        get { settings.value.discardsLateFrames }
        set { settings.withLock { $0.discardsLateFrames = newValue } }
    }

    // MARK: Results

    /// Sets the delegate and the queue it is called on (nil: a serial queue of the output).
    public func setMetadataObjectsDelegate(_ delegate: CaptureMetadataOutputObjectsDelegate?, queue: DispatchQueue? = nil) {
        settings.withLock { settings in
            settings.delegate = delegate
            settings.delegateQueue = queue
        }
    }

    /// Outputs of the session (by name) on which the corners of the codes in view are drawn, as a
    /// viewfinder highlights what it reads: one outline per code, in the overlay named
    /// `<this output>-codes`, following the codes as they move and gone when they leave. The corners are
    /// in this output's frame, so the outputs drawn on should share its connection's rotation and
    /// mirroring (a preview of the same camera, as is usual).
    public var highlightOutputs: [String] {
        get { settings.value.highlightOutputs }
        set {
            let old = settings.withLock { settings -> [String] in
                defer { settings.highlightOutputs = newValue }
                return settings.highlightOutputs
            }
            for name in old where !newValue.contains(name) { try? session?.output(named: name)?.removeOverlay(named: highlightOverlayName) }
            decodeState.withLock { $0.highlighted = [] }
        }
    }

    /// The name of the overlay the highlight draws on `highlightOutputs`.
    public var highlightOverlayName: String { "\(name)-codes" }

    /// The delegate (held weakly), like `metadataObjectsDelegate`.
    public var metadataObjectsDelegate: CaptureMetadataOutputObjectsDelegate? { settings.value.delegate }

    /// Every code as it comes into view, as an AsyncSequence. Each call makes a new subscriber;
    /// nothing is dropped.
    public func metadataObjects() -> AsyncStream<MetadataMachineReadableCodeObject> { broadcaster.stream() }

    /// The codes read in each decoded frame, as AVFoundation's delegate gets them: a list per frame in
    /// which codes are read (with their corners in that frame), then one empty list when none is left.
    /// Fed whatever `delivery` is. Each call makes a new subscriber.
    public func metadataObjectsPerFrame() -> AsyncStream<[MetadataMachineReadableCodeObject]> { frameBroadcaster.stream() }

    /// The codes in view now (as of the last decoded frame).
    public var visibleMetadataObjects: [MetadataMachineReadableCodeObject] { decodeState.withLock { $0.tracker.visible } }

    /// Frames that reached the output (each is decoded or dropped).
    public var receivedFrameCount: Int { received.load(ordering: .relaxed) }
    /// Frames decoded.
    public var decodedFrameCount: Int { decoded.load(ordering: .relaxed) }
    /// Frames dropped because the previous one was still being decoded (or the output left the
    /// pipeline before its turn came).
    public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) }

    // MARK: The branch

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        guard current.rectOfInterest.isValid else {
            throw .invalidConfiguration(
                object: description, reason: "the rect of interest \(current.rectOfInterest) must lie inside <0, 0, 1, 1> with a positive width and height")
        }
        if let rate = current.maxFrameRate, !(rate > 0 && rate.isFinite) {
            throw .invalidConfiguration(object: description, reason: "the maximum frame rate must be positive, not \(rate)")
        }
        if let types = current.types {
            do throws(BarcodeError) { try current.backend.checkReads(types, object: description) } catch { throw CaptureError(error) }
        }
        let discards = current.discardsLateFrames
        waitsForDecoder.store(!discards, ordering: .releasing)
        var elements = try context.videoHead(
            leaky: discards, maxBuffers: 1, size: current.size, format: "GRAY8", maxRate: current.maxFrameRate, overlays: false)
        elements.append(
            ElementSpec(
                "appsink", name: "\(name)_sink",
                [
                    ("sync", "false"), ("async", "false"), ("max-buffers", "1"), ("drop", discards ? "true" : "false"),
                    ("wait-on-eos", "false"), ("enable-last-sample", "false"),
                ]))
        var segment = BranchSegment(output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)])
        // Every frame decoded: when the session stops (a file input ended), the frames still queued are
        // let through first, as a recording's are.
        segment.drainsOnRemoval = !discards
        return segment
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        generation.add(1, ordering: .releasing)
        worker.async { self.forget() }
        handle.element("\(name)_sink")?.setAppSinkCallbacks(onSample: { [weak self, weak handle] sample in
            self?.receive(sample, handle: handle)
        })
    }

    override func detach() {
        super.detach()
        generation.add(1, ordering: .releasing)
        worker.async { self.forget() }
    }

    /// Clears the codes in view (the stream starts or stops); they are reported as lost.
    private func forget() {
        let (lost, owed) = decodeState.withLock { state -> ([MetadataMachineReadableCodeObject], Bool) in
            state.highlighted = []
            defer { state.deliveredCodes = false }
            return (state.tracker.reset(), state.deliveredCodes)
        }
        highlight([], on: settings.value.highlightOutputs)
        deliver(appeared: [], gone: lost, frame: owed ? [] : nil, timestamp: nil, handle: nil)
    }

    /// Runs on the streaming thread: drops the frame when the worker is busy, else copies the rect of
    /// interest out and hands it to the worker. Never blocks, unless late frames are not discarded:
    /// then it waits (bounded) until the worker has finished the frame.
    private func receive(_ sample: SampleView, handle: BranchHandle?) {
        // A frame that comes after the output left the pipeline (it is being stopped) is not decoded.
        let current = generation.load(ordering: .acquiring)
        guard isAttached, let buffer = sample.buffer, let layout = sample.videoLayout, layout.format == "GRAY8",
            let stride = layout.strides.first, let offset = layout.offsets.first
        else { return }
        received.add(1, ordering: .relaxed)
        guard decoding.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        let rect = clamped(settings.value.rectOfInterest)
        let crop = GrayImage.pixelRect(rect, width: layout.width, height: layout.height)
        let image =
            buffer.withBytes { bytes -> GrayImage? in
                guard bytes.count >= offset + stride * (layout.height - 1) + layout.width else { return nil }
                return GrayImage(
                    copying: UnsafeRawBufferPointer(rebasing: bytes[offset...]), stride: stride,
                    x: crop.x, y: crop.y, width: crop.width, height: crop.height)
            } ?? nil
        guard let image else {
            dropped.add(1, ordering: .relaxed)
            decoderBecameIdle()
            return
        }
        let timestamp = Double(buffer.pts ?? 0) / 1e9
        let frame = (width: layout.width, height: layout.height)
        worker.async {
            self.decode(image, origin: (crop.x, crop.y), frame: frame, timestamp: timestamp, generation: current, handle: handle)
        }
        // Late frames not discarded: the frame is decoded before the next one (or the end of stream)
        // is taken.
        if waitsForDecoder.load(ordering: .acquiring) { waitForTheDecoder() }
    }

    /// Late frames not discarded: waits until the worker is free (the frame just handed over is
    /// decoded and delivered). Bounded by `maximumDecoderWait`: a decode takes tens of milliseconds;
    /// past the bound (a delivery held up by a session being stopped by a thread that waits for this
    /// streaming thread) the stream goes on, and the next frame, finding the decoder still busy, is
    /// dropped and counted: never a hang.
    private func waitForTheDecoder() {
        let deadline = Date().addingTimeInterval(Self.maximumDecoderWait)
        decoderIdle.lock()
        while decoding.load(ordering: .acquiring) && decoderIdle.wait(until: deadline) {}
        decoderIdle.unlock()
    }

    /// How long a frame waits for the decoder, at most, when late frames are not discarded (seconds).
    static let maximumDecoderWait = 5.0

    /// The worker is free again: a frame waiting for it goes on.
    private func decoderBecameIdle() {
        decoderIdle.lock()
        decoding.store(false, ordering: .releasing)
        decoderIdle.broadcast()
        decoderIdle.unlock()
    }

    /// Runs on the worker: decodes, turns reads into appearances, delivers.
    private func decode(
        _ image: GrayImage, origin: (x: Int, y: Int), frame: (width: Int, height: Int), timestamp: Double,
        generation frameGeneration: Int, handle: BranchHandle?
    ) {
        defer { decoderBecameIdle() }
        guard frameGeneration == generation.load(ordering: .acquiring) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        let current = settings.value
        let (reader, frameNumber) = decodeState.withLock { state -> (BarcodeReader?, Int) in
            defer { state.frameNumber &+= 1 }
            if let reader = state.reader, reader.backend == current.backend,
                reader.types == Set(current.types ?? Array(current.backend.availableTypes))
            {
                return (reader, state.frameNumber)
            }
            // Types were checked against the backend when set; keep what it can read if that changed.
            let readable = current.types?.filter { current.backend.availableTypes.contains($0) }
            state.reader = try? BarcodeReader(backend: current.backend, types: readable, object: description)
            return (state.reader, state.frameNumber)
        }
        decoded.add(1, ordering: .relaxed)
        guard let reader else { return }
        let reads = reader.read(cropped: image, origin: origin, frame: frame, timestamp: timestamp, frameNumber: frameNumber)
        guard frameGeneration == generation.load(ordering: .acquiring) else { return }
        let (appeared, gone, frameCodes, outlines) = decodeState.withLock { state in
            state.tracker.disappearanceInterval = current.disappearanceInterval
            state.tracker.disappearanceFrames = current.disappearanceFrames
            let (appeared, gone) = state.tracker.update(reads, timestamp: timestamp)
            // Per frame: the frame's reads while there are some, then one empty list.
            var frameCodes: [MetadataMachineReadableCodeObject]?
            if !reads.isEmpty || state.deliveredCodes { frameCodes = reads }
            state.deliveredCodes = !reads.isEmpty
            // The outlines change when a code moves, comes or goes; an unchanged view draws nothing new.
            let outlines = state.tracker.visible.map(\.corners)
            guard !current.highlightOutputs.isEmpty, outlines != state.highlighted else {
                return (appeared, gone, frameCodes, nil as [[NormalizedPoint]]?)
            }
            state.highlighted = outlines
            return (appeared, gone, frameCodes, outlines)
        }
        if let outlines { highlight(outlines, on: current.highlightOutputs) }
        deliver(appeared: appeared, gone: gone, frame: frameCodes, timestamp: timestamp, handle: handle)
    }

    /// Draws the outlines of the codes in view on the highlight outputs (nothing when none is in view).
    private func highlight(_ outlines: [[NormalizedPoint]], on outputs: [String]) {
        guard let session else { return }
        let shapes: [CaptureOverlay.Shape] = outlines.map { corners in
            let clamped = corners.map { NormalizedPoint(x: min(max($0.x, 0), 1), y: min(max($0.y, 0), 1)) }
            if clamped.count >= 3 { return .polygon(clamped) }
            // A linear code read along one line: its two ends.
            return .line(from: clamped.first ?? NormalizedPoint(x: 0, y: 0), to: clamped.last ?? NormalizedPoint(x: 0, y: 0))
        }
        let overlay = CaptureOverlay(name: highlightOverlayName, content: .shapes(shapes, style: .init(stroke: .green, lineWidth: 0.008)))
        for name in outputs {
            guard let output = session.output(named: name), output.acceptsOverlays else { continue }
            let present = output.overlays.contains { $0.name == overlay.name }
            if shapes.isEmpty {
                if present { try? output.removeOverlay(named: overlay.name) }
            } else if present {
                try? output.updateOverlay(named: overlay.name) { $0 = overlay }
            } else {
                try? output.addOverlay(overlay)
            }
        }
    }

    /// Hands out one decoded frame's news: codes that appeared and left, and (`frame`, nil when there
    /// is nothing to say per frame) the codes read in it.
    private func deliver(
        appeared: [MetadataMachineReadableCodeObject], gone: [MetadataMachineReadableCodeObject], frame: [MetadataMachineReadableCodeObject]?,
        timestamp: Double?, handle: BranchHandle?
    ) {
        guard !appeared.isEmpty || !gone.isEmpty || frame != nil else { return }
        for object in appeared {
            broadcaster.post(object)
            handle?.post(.codeDetected(output: name, object))
        }
        let current = settings.value
        if let frame {
            frameBroadcaster.post(frame)
            // The event only when asked for: it comes up to 15 times a second.
            if current.delivery == .everyFrame { handle?.post(.codesInFrame(output: name, time: timestamp ?? 0, codes: frame)) }
        }
        guard let delegate = current.delegate else { return }
        let queue = current.delegateQueue ?? delegateQueue
        let shown = current.delivery == .everyFrame ? frame : (appeared.isEmpty ? nil : appeared)
        guard shown != nil || !gone.isEmpty else { return }
        queue.async {
            if let shown { delegate.metadataOutput(self, didOutput: shown) }
            if !gone.isEmpty { delegate.metadataOutput(self, didLose: gone) }
        }
    }

    private func clamped(_ rect: NormalizedRect) -> NormalizedRect {
        let x = min(max(rect.x, 0), 1), y = min(max(rect.y, 0), 1)
        return NormalizedRect(x: x, y: y, width: min(max(rect.width, 0), 1 - x), height: min(max(rect.height, 0), 1 - y))
    }
}
