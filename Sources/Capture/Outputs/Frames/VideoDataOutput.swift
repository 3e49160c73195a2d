import Foundation
import GStreamer
import Synchronization

/// One video frame delivered by a `CaptureVideoDataOutput`. The pixels are a copy: the frame
/// stays valid as long as the value lives.
public struct VideoFrame: Sendable {
    public let data: [UInt8]
    public let layout: VideoLayout
    /// Presentation time on the session's clock, in seconds.
    public let timestamp: Double
    /// Counts frames delivered to this output, from 0.
    public let sequence: Int

    public var width: Int { layout.width }
    public var height: Int { layout.height }
    public var pixelFormat: String { layout.format }

    /// The bytes of pixel (x, y) in the first plane (packed formats: one pixel's components).
    public func pixel(x: Int, y: Int, bytesPerPixel: Int = 4) -> ArraySlice<UInt8> {
        let start = layout.offsets[0] + y * layout.strides[0] + x * bytesPerPixel
        return data[start..<(start + bytesPerPixel)]
    }
}

/// Receives frames of a `CaptureVideoDataOutput`, like `AVCaptureVideoDataOutputSampleBufferDelegate`.
/// Called on the output's serial delivery queue.
public protocol CaptureVideoDataOutputDelegate: AnyObject, Sendable {
    func videoDataOutput(_ output: CaptureVideoDataOutput, didOutput frame: VideoFrame)
    func videoDataOutput(_ output: CaptureVideoDataOutput, didDrop reason: FrameDropReason)
}

extension CaptureVideoDataOutputDelegate {
    public func videoDataOutput(_ output: CaptureVideoDataOutput, didDrop reason: FrameDropReason) {}
}

/// Frames as they arrive, like `AVCaptureVideoDataOutput`: an AsyncSequence (`frames()`) and a delegate.
public final class CaptureVideoDataOutput: CaptureOutput, @unchecked Sendable {
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

    public override init(name: String = "frames") { super.init(name: name) }

    public override var kind: String { "frames" }

    /// The pixel format of delivered frames (a GStreamer raw video format: BGRx, RGBA, I420, GRAY8 ...).
    public var pixelFormat: String {
        get { settings.value.pixelFormat }
        set { settings.withLock { $0.pixelFormat = newValue } }
    }

    /// Formats this output can deliver.
    public static let availablePixelFormats = ["BGRx", "BGRA", "RGBx", "RGBA", "RGB", "BGR", "I420", "NV12", "YUY2", "GRAY8"]

    /// When true (the default), a frame that arrives while the consumer is still busy with the previous
    /// one is dropped (reported with reason `late`); when false, frames queue up to 30 deep and the
    /// overflow is reported as `out-of-buffers`.
    public var alwaysDiscardsLateVideoFrames: Bool {
        get { settings.value.alwaysDiscardsLateVideoFrames }
        set { settings.withLock { $0.alwaysDiscardsLateVideoFrames = newValue } }
    }

    /// At most this many frames per second (nil: every frame).
    public var maxFrameRate: Double? {
        get { settings.value.maxFrameRate }
        set { settings.withLock { $0.maxFrameRate = newValue } }
    }

    /// The frame size (nil: the session preset's size).
    public var size: Size? {
        get { settings.value.size }
        set { settings.withLock { $0.size = newValue } }
    }

    public var delegate: CaptureVideoDataOutputDelegate? {
        get { settings.value.delegate }
        set { settings.withLock { $0.delegate = newValue } }
    }

    /// Frames delivered so far (counted even when nobody listens).
    public var deliveredFrameCount: Int { delivered.load(ordering: .relaxed) }

    /// The frames, as an AsyncSequence. Each call makes a new subscriber.
    public func frames() -> AsyncStream<VideoFrame> {
        broadcaster.stream(bufferingPolicy: alwaysDiscardsLateVideoFrames ? .bufferingNewest(1) : .bufferingNewest(30))
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        guard Self.availablePixelFormats.contains(current.pixelFormat) else {
            throw .invalidConfiguration(object: description, reason: "pixel format '\(current.pixelFormat)' is not one of \(Self.availablePixelFormats.joined(separator: ", "))")
        }
        var elements = try context.videoHead(leaky: true, maxBuffers: 2, size: current.size, format: current.pixelFormat, maxRate: current.maxFrameRate)
        elements.append(ElementSpec("appsink", name: "\(name)_sink",
                                    [("sync", "false"), ("async", "false"), ("max-buffers", "2"), ("drop", "true"), ("wait-on-eos", "false"), ("enable-last-sample", "false")]))
        return BranchSegment(output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)])
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

    /// Runs on the streaming thread: counts, copies out when someone listens, hands off, returns.
    private func receive(_ sample: SampleView, handle: BranchHandle?) {
        guard let buffer = sample.buffer else { return }
        let sequence = delivered.add(1, ordering: .relaxed).oldValue
        let current = settings.value
        let delegate = current.delegate
        guard broadcaster.hasSubscribers || delegate != nil, let layout = sample.videoLayout else { return }
        guard let bytes = buffer.withBytes({ Array($0) }) else { return }
        let frame = VideoFrame(data: bytes, layout: layout, timestamp: Double(buffer.pts ?? 0) / 1e9, sequence: sequence)
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
