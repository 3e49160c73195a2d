import Foundation
import GStreamer
import Synchronization

/// One video frame delivered by a `CaptureVideoDataOutput`, like a `CMSampleBuffer`: the GStreamer
/// buffer itself, mapped, not a copy. Read its pixels in place with `withUnsafeBytes` (all planes) or
/// `withUnsafePlane` (one plane with its stride); `bytes` copies them when you ask.
///
/// A frame holds its buffer for as long as a copy of the value lives, and the buffer goes back to its
/// producer only then: keep frames briefly, and copy (`bytes`) what you keep.
public struct VideoFrame: Sendable {
    private let mapped: MappedBuffer
    /// Format, size, and each plane's stride and offset.
    public let layout: VideoLayout
    /// Presentation time on the session's clock, in seconds.
    public let timestamp: Double
    /// Counts frames delivered to this output, from 0.
    public let sequence: Int

    init(mapped: MappedBuffer, layout: VideoLayout, timestamp: Double, sequence: Int) {
        self.mapped = mapped
        self.layout = layout
        self.timestamp = timestamp
        self.sequence = sequence
    }

    /// The frame's width in pixels.
    public var width: Int { layout.width }
    /// The frame's height in pixels.
    public var height: Int { layout.height }
    /// The frame's GStreamer raw video format (`BGRx`, `I420` ...): the output's `pixelFormat`.
    public var pixelFormat: String { layout.format }
    /// The number of planes (1 for packed formats such as BGRx, 3 for I420, 2 for NV12).
    public var planeCount: Int { layout.strides.count }
    /// The frame's size in bytes, all planes.
    public var byteCount: Int { mapped.bytes.count }

    /// Calls `body` with the frame's bytes, all planes, in place (no copy). The pointer is valid only
    /// inside `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(mapped.bytes)
    }

    /// Calls `body` with one plane's bytes in place (from its first row to the next plane, or the end)
    /// and its stride (bytes per row).
    public func withUnsafePlane<R>(_ plane: Int, _ body: (UnsafeRawBufferPointer, _ stride: Int) throws -> R) rethrows -> R {
        precondition(plane >= 0 && plane < planeCount, "plane \(plane) of a \(pixelFormat) frame with \(planeCount) planes")
        let all = mapped.bytes
        let start = layout.offsets[plane]
        let end = plane + 1 < planeCount ? layout.offsets[plane + 1] : all.count
        return try body(UnsafeRawBufferPointer(rebasing: all[start..<max(start, min(end, all.count))]), layout.strides[plane])
    }

    /// A copy of the frame's bytes, all planes (the one place a frame is copied).
    public var bytes: [UInt8] { Array(mapped.bytes) }

    /// The bytes of pixel (x, y) in the first plane (packed formats: one pixel's components), copied.
    public func pixel(x: Int, y: Int, bytesPerPixel: Int = 4) -> [UInt8] {
        let start = layout.offsets[0] + y * layout.strides[0] + x * bytesPerPixel
        return Array(mapped.bytes[start..<(start + bytesPerPixel)])
    }
}

/// Receives frames of a `CaptureVideoDataOutput`, like `AVCaptureVideoDataOutputSampleBufferDelegate`.
/// Called on the output's serial delivery queue.
public protocol CaptureVideoDataOutputDelegate: AnyObject, Sendable {
    /// Called with each frame delivered, in order; the frame's buffer is held until the value is gone.
    func videoDataOutput(_ output: CaptureVideoDataOutput, didOutput frame: VideoFrame)
    /// Called for each frame that did not reach the output, with the reason.
    func videoDataOutput(_ output: CaptureVideoDataOutput, didDrop reason: FrameDropReason)
}

extension CaptureVideoDataOutputDelegate {
    /// Does nothing by default.
    public func videoDataOutput(_ output: CaptureVideoDataOutput, didDrop reason: FrameDropReason) {}
}

/// Frames as they arrive, like `AVCaptureVideoDataOutput`: an AsyncSequence (`frames()`) and a delegate.
public final class CaptureVideoDataOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); settings and the layout cache
    // are behind `Locked`, counters and the busy flag are atomics.
    private struct Settings {
        var pixelFormat = "BGRx"
        var alwaysDiscardsLateVideoFrames = true
        var maxFrameRate: Double?
        var size: Size?
        weak var delegate: CaptureVideoDataOutputDelegate?
    }
    private let settings = Locked(Settings())
    private let broadcaster = Broadcaster<VideoFrame>()
    private let deliveryQueue = DispatchQueue(label: "capture.video-data-output")
    private let delegateBusy = Atomic<Bool>(false)
    private let delivered = Atomic<Int>(0)
    /// The layout read from the caps of the frames arriving now, by caps identity (caps are read once
    /// per stream, not once per frame).
    private let layoutCache = Locked<(caps: UInt, layout: VideoLayout?)>((0, nil))

    /// A frames output named `name`: BGRx frames at the session preset's size, late frames discarded.
    public override init(name: String = "frames") { super.init(name: name) }

    /// `frames`.
    public override var kind: String { "frames" }

    /// The pixel format of delivered frames (a GStreamer raw video format: BGRx, RGBA, I420, GRAY8 ...).
    public var pixelFormat: String {
        get { settings[\.pixelFormat] }
        set { settings[\.pixelFormat] = newValue }
    }

    /// Formats this output can deliver.
    public static let availablePixelFormats = ["BGRx", "BGRA", "RGBx", "RGBA", "RGB", "BGR", "I420", "NV12", "YUY2", "GRAY8"]

    /// When true (the default), a frame that arrives while the consumer is still busy with the previous
    /// one is dropped (reported with reason `late`); when false, frames queue up to 30 deep and the
    /// overflow is reported as `out-of-buffers`.
    public var alwaysDiscardsLateVideoFrames: Bool {
        get { settings[\.alwaysDiscardsLateVideoFrames] }
        set { settings[\.alwaysDiscardsLateVideoFrames] = newValue }
    }

    /// At most this many frames per second (nil: every frame).
    public var maxFrameRate: Double? {
        get { settings[\.maxFrameRate] }
        set { settings[\.maxFrameRate] = newValue }
    }

    /// The frame size (nil: the session preset's size).
    public var size: Size? {
        get { settings[\.size] }
        set { settings[\.size] = newValue }
    }

    /// Receives frames on the output's serial delivery queue (held weakly).
    public var delegate: CaptureVideoDataOutputDelegate? {
        get { settings[\.delegate] }
        set { settings[\.delegate] = newValue }
    }

    /// Frames delivered so far (counted even when nobody listens).
    public var deliveredFrameCount: Int { delivered.load(ordering: .relaxed) }

    /// The frames, as an AsyncSequence. Each call makes a new subscriber.
    ///
    /// ```swift
    /// let frames = CaptureVideoDataOutput(name: "frames")
    /// frames.pixelFormat = "RGBA"
    /// try session.addOutput(frames)
    /// try await session.startRunning()
    /// for await frame in frames.frames() {
    ///     print(frame.sequence, frame.width, frame.height, frame.timestamp)
    /// }
    /// ```
    public func frames() -> AsyncStream<VideoFrame> {
        broadcaster.stream(bufferingPolicy: alwaysDiscardsLateVideoFrames ? .bufferingNewest(1) : .bufferingNewest(30))
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        guard Self.availablePixelFormats.contains(current.pixelFormat) else {
            throw .invalidConfiguration(
                object: description, reason: "pixel format '\(current.pixelFormat)' is not one of \(Self.availablePixelFormats.joined(separator: ", "))")
        }
        var elements = try context.videoHead(leaky: true, maxBuffers: 2, size: current.size, format: current.pixelFormat, maxRate: current.maxFrameRate)
        elements.append(
            ElementSpec(
                "appsink", name: "\(name)_sink",
                [("sync", "false"), ("async", "false"), ("max-buffers", "2"), ("drop", "true"), ("wait-on-eos", "false"), ("enable-last-sample", "false")]))
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        handle.element("\(name)_sink")?.setAppSinkCallbacks(onSample: { [weak self, weak handle] sample in
            guard let self else { return }
            self.receive(sample, handle: handle)
        })
    }

    override func sourceDroppedFrames(_ count: Int) {
        super.sourceDroppedFrames(count)
        guard let delegate = settings.value.delegate else { return }
        deliveryQueue.async {
            for _ in 0..<count { delegate.videoDataOutput(self, didDrop: .discontinuity) }
        }
    }

    /// The frame layout of a sample, read from its caps when they changed.
    private func layout(of sample: SampleView) -> VideoLayout? {
        let identity = sample.capsIdentity
        if let cached = layoutCache.withLock({ $0.caps == identity ? $0.layout : nil }) { return cached }
        let layout = sample.videoLayout
        layoutCache.withLock { $0 = (identity, layout) }
        return layout
    }

    /// Runs on the streaming thread: counts, maps the buffer when someone listens (no copy), hands off,
    /// returns.
    private func receive(_ sample: SampleView, handle: BranchHandle?) {
        guard let buffer = sample.buffer else { return }
        let sequence = delivered.add(1, ordering: .relaxed).oldValue
        let current = settings.value
        let delegate = current.delegate
        guard broadcaster.hasSubscribers || delegate != nil, let layout = layout(of: sample) else { return }
        guard let mapped = MappedBuffer(buffer) else { return }
        let frame = VideoFrame(mapped: mapped, layout: layout, timestamp: Double(buffer.pts ?? 0) / 1e9, sequence: sequence)
        if broadcaster.post(frame) {
            handle?.post(.frameDropped(output: name, reason: current.alwaysDiscardsLateVideoFrames ? .lateData : .outOfBuffers))
        }
        if let delegate {
            if current.alwaysDiscardsLateVideoFrames && delegateBusy.load(ordering: .acquiring) {
                deliveryQueue.async { delegate.videoDataOutput(self, didDrop: .lateData) }
                handle?.post(.frameDropped(output: name, reason: .lateData))
                return
            }
            delegateBusy.store(true, ordering: .releasing)
            deliveryQueue.async {
                delegate.videoDataOutput(self, didOutput: frame)
                self.delegateBusy.store(false, ordering: .releasing)
            }
        }
    }
}
