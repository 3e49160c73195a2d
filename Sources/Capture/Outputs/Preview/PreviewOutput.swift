import Foundation
import GStreamer
import Synchronization

/// Where a preview goes.
public enum PreviewSink: String, Sendable, CaseIterable {
    /// A window when a display exists, else nothing (the session still runs).
    case auto
    /// A window; refused when there is no display.
    case window
    /// No window (frames are consumed and discarded).
    case none
}

/// The live preview, like `AVCaptureVideoPreviewLayer`: a window when a display exists.
public final class CaptureVideoPreviewOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); the sink is behind `Locked`.
    private let sinkState: Locked<PreviewSink>

    /// A preview output named `name` showing its frames where `sink` says (a window when a display exists, by default).
    public init(name: String = "preview", sink: PreviewSink = .auto) {
        sinkState = Locked(sink)
        super.init(name: name)
    }

    /// `preview`.
    public override var kind: String { "preview" }

    /// Where the preview goes: a window, or nowhere.
    public var sink: PreviewSink {
        get { sinkState.value }
        set { sinkState.value = newValue }
    }

    /// True when a display (X11 or Wayland) is available to show a window.
    public static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Whether this preview shows a window when it runs.
    public var showsWindow: Bool {
        switch sink {
        case .auto: Self.hasDisplay
        case .window: true
        case .none: false
        }
    }

    /// What the preview shows now, overlays included, as an image file's bytes (PNG or JPEG) at the
    /// preview's size: the viewfinder as the user sees it, whether or not a window shows it.
    /// Throws `notRunning` before the preview has shown a frame.
    public func snapshot(codec: PhotoCodec = .png) throws(CaptureError) -> [UInt8] {
        guard let sink = handleState.value?.element("\(name)_sink"), let sample = sink.lastSample else {
            throw .notRunning(object: description)
        }
        let image: Sample
        do { image = try sample.converted(to: codec == .png ? "image/png" : "image/jpeg") } catch {
            throw .pipelineBuildFailed(object: "\(description) snapshot", reason: error.description)
        }
        guard let bytes = image.view.buffer?.withBytes({ Array($0) }), !bytes.isEmpty else {
            throw .pipelineBuildFailed(object: "\(description) snapshot", reason: "the encoder gave no bytes")
        }
        return bytes
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        if sink == .window && !Self.hasDisplay {
            throw .invalidConfiguration(object: description, reason: "sink=window needs a display (DISPLAY or WAYLAND_DISPLAY); use sink=auto to run headless")
        }
        var elements = try context.videoHead(leaky: true, maxBuffers: 2)
        if showsWindow {
            elements.append(ElementSpec("autovideosink", name: "\(name)_sink"))
        } else {
            elements.append(ElementSpec("fakesink", name: "\(name)_sink", [("sync", "true"), ("async", "false"), ("enable-last-sample", "true")]))
        }
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
    }
}
