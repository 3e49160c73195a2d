import Foundation
import GStreamer
import Synchronization

/// One encoded frame of a `CaptureJPEGPreviewOutput`: a complete JPEG image, copied out of the branch.
public struct JPEGPreviewFrame: Sendable {
    /// The JPEG file's bytes.
    public let bytes: [UInt8]
    /// Presentation time on the session's clock, in seconds.
    public let timestamp: Double
    /// Counts frames encoded by this output, from 0.
    public let sequence: Int
    /// When the frame was captured, in seconds since 1970 (its timestamp on the pipeline's clock, moved
    /// to the wall clock): a viewer's clock minus this is the latency from capture to display.
    public let capturedAt: Double?

    /// A frame of `bytes` (a JPEG image) with its timestamp, sequence number and capture time.
    public init(bytes: [UInt8], timestamp: Double, sequence: Int, capturedAt: Double? = nil) {
        self.bytes = bytes
        self.timestamp = timestamp
        self.sequence = sequence
        self.capturedAt = capturedAt
    }
}

/// A live preview as a stream of JPEG images (what an MJPEG viewer over HTTP shows), like a preview
/// layer whose pixels go somewhere else than a window. Its branch is
/// `queue (leaky, 1 buffer) ! videoconvert ! videoscale ! capsfilter ! overlaycomposition ! jpegenc ! appsink`:
/// a consumer that is slow makes the queue drop frames (reported as `frame-dropped`, reason `late`),
/// never the camera or the other branches wait.
///
/// Frames reach `frameHandler` on the branch's streaming thread (it must copy or hand off, and return)
/// and `frames()` as an AsyncSequence that keeps only the newest frame.
public final class CaptureJPEGPreviewOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); settings, the handler and the
    // latest frame are behind `Locked`, the counter is an atomic.
    private struct Settings {
        var size: Size?
        var quality = 75
        var maxFrameRate: Double?
        var handler: (@Sendable (JPEGPreviewFrame) -> Void)?
    }
    private let settings = Locked(Settings())
    private let latest = Locked<JPEGPreviewFrame?>(nil)
    private let broadcaster = Broadcaster<JPEGPreviewFrame>()
    private let encoded = Atomic<Int>(0)

    /// The kind name of these outputs in events and compiled graphs.
    public static let kindName = "jpeg-preview"

    /// A JPEG preview output named `name`.
    /// - Parameters:
    ///   - name: The output's name.
    ///   - size: The frame size; nil for the session preset's size.
    ///   - quality: The JPEG quality, 1...100.
    ///   - maxFrameRate: At most this many frames per second; nil for every frame.
    public init(name: String = "jpeg-preview", size: Size? = nil, quality: Int = 75, maxFrameRate: Double? = nil) {
        super.init(name: name)
        settings.withLock {
            $0.size = size
            $0.quality = quality
            $0.maxFrameRate = maxFrameRate
        }
    }

    /// `jpeg-preview`.
    public override var kind: String { Self.kindName }

    /// The frame size (nil: the session preset's size).
    public var size: Size? {
        get { settings[\.size] }
        set { settings[\.size] = newValue }
    }
    /// JPEG quality, 1-100 (default 75).
    public var quality: Int {
        get { settings[\.quality] }
        set { settings[\.quality] = newValue }
    }
    /// At most this many frames per second (nil: every frame the camera gives).
    public var maxFrameRate: Double? {
        get { settings[\.maxFrameRate] }
        set { settings[\.maxFrameRate] = newValue }
    }

    /// Called with every encoded frame, on the branch's streaming thread: copy or hand off, and return.
    public var frameHandler: (@Sendable (JPEGPreviewFrame) -> Void)? {
        get { settings[\.handler] }
        set { settings[\.handler] = newValue }
    }

    /// The newest frame encoded (nil before the first, and after the branch left the pipeline).
    public var latestFrame: JPEGPreviewFrame? { latest.value }

    /// Frames encoded so far.
    public var encodedFrameCount: Int { encoded.load(ordering: .relaxed) }

    /// The frames, newest only: a consumer slower than the camera skips frames. Each call makes a new
    /// subscriber.
    public func frames() -> AsyncStream<JPEGPreviewFrame> { broadcaster.stream(bufferingPolicy: .bufferingNewest(1)) }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        guard (1...100).contains(current.quality) else {
            throw .invalidConfiguration(object: description, reason: "quality \(current.quality) is not between 1 and 100")
        }
        if let rate = current.maxFrameRate, !(rate > 0 && rate <= 240) {
            throw .invalidConfiguration(object: description, reason: "a frame rate limit is above 0 and at most 240, not \(rate)")
        }
        var elements = try context.videoHead(leaky: true, maxBuffers: 1, size: current.size, format: "I420", maxRate: current.maxFrameRate)
        elements.append(ElementSpec("jpegenc", name: "\(name)_encoder", [("quality", "\(current.quality)")]))
        elements.append(
            ElementSpec(
                "appsink", name: "\(name)_sink",
                [
                    ("sync", "false"), ("async", "false"), ("max-buffers", "1"), ("drop", "true"), ("wait-on-eos", "false"),
                    ("enable-last-sample", "false"),
                ]))
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        handle.element("\(name)_sink")?.setAppSinkCallbacks(onSample: { [weak self] sample in
            self?.receive(sample)
        })
    }

    override func detach() {
        super.detach()
        latest.value = nil
    }

    /// A consumer of this output's frames (a web viewer) was behind and skipped `count` of them: each is
    /// reported as `frame-dropped` (reason `late`), like the frames the branch's own queue drops.
    public func reportLateFrames(_ count: Int = 1) {
        guard let handle = handleState.value else { return }
        for _ in 0..<count { handle.post(.frameDropped(output: name, reason: .lateData)) }
    }

    /// Runs on the streaming thread: copies the JPEG's bytes once and hands them on.
    private func receive(_ sample: SampleView) {
        guard let buffer = sample.buffer, let bytes = buffer.withBytes({ Array($0) }), !bytes.isEmpty else { return }
        let pts = buffer.pts
        // The running time now and the frame's: how long ago it was captured.
        let capturedAt = pts.flatMap { pts in
            handleState.value?.runningTime.map { now in Date().timeIntervalSince1970 - (Double(now) - Double(pts)) / 1e9 }
        }
        let frame = JPEGPreviewFrame(
            bytes: bytes, timestamp: Double(pts ?? 0) / 1e9,
            sequence: encoded.add(1, ordering: .relaxed).oldValue, capturedAt: capturedAt)
        latest.value = frame
        settings[\.handler]?(frame)
        if broadcaster.hasSubscribers { broadcaster.post(frame) }
    }
}
