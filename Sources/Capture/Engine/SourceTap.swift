import Foundation
import GStreamer
import Synchronization

/// A running source segment as the device controls see it: the elements that simulate controls or
/// crop the zoom (their properties are set from any thread; GStreamer elements lock their own
/// properties), and the frames that pass, where a change's first frame is recognised.
///
/// Threading: `apply` and `arm` run on the caller's thread (the user's, never a streaming thread);
/// the probes run on the streaming thread and only read lock-protected markers, fulfil promises and
/// post events.
final class SourceTap: @unchecked Sendable {
    // @unchecked: `bin` and the elements are GStreamer objects (reference counting and properties are
    // thread-safe); every mutable field is behind a Locked or an Atomic.
    /// Where a change's first frame is recognised.
    enum Stage: Sendable {
        /// The first frame entering the session's control elements after their properties were set.
        case element
        /// The first frame the driver captured after the control was written (its timestamp).
        case driver
    }

    private struct Marker {
        let summary: String
        let stage: Stage
        /// Running time after a driver write: frames captured before it predate the change.
        let after: UInt64?
        let made: ContinuousClock.Instant
        var framesBefore = 0
        let promise: Promise<FrameStamp>
    }

    let id: Int
    let device: String
    let input: String
    /// The device format's size (the crop is computed in its pixels).
    let frameSize: Size?
    private let bin: Bin
    private let balance: Element?
    private let crop: Element?
    private let cast = Locked(WhiteBalanceCast.neutral)
    private let applied = Locked<SourceEffects?>(nil)
    private let markers = Locked<[Marker]>([])
    /// Effects staged by `change`, set by the first stage's probe before the next frame enters it.
    private var staged: SourceEffects?  // guarded by `markers`' lock
    private let hasStage: Bool
    private let pending = Atomic<Int>(0)
    private let post: @Sendable (SessionEvent.Kind) -> Void
    private let capsSeen = Locked<[String]>([])
    private static let nextID = Atomic<Int>(0)
    /// A marker no frame answered within this long is dropped (the stream stalled or stopped).
    static let markerLifetime = Duration.seconds(10)

    /// The tap of a source bin built from `segment`; nil when the segment has nothing the controls
    /// touch (an audio input, a file).
    init?(segment: SourceSegment, bin: Bin, post: @escaping @Sendable (SessionEvent.Kind) -> Void) {
        guard segment.media == .video, let device = segment.captureDevice, DeviceControlHub.shared.isControllable(device) else { return nil }
        id = Self.nextID.add(1, ordering: .relaxed).newValue
        self.device = device.uniqueID
        input = segment.input
        frameSize = segment.format?.device.size
        self.bin = bin
        self.post = post
        balance = bin.child(named: SourceStages.balance(segment.input))
        crop = bin.child(named: SourceStages.zoom(segment.input))
        let stagePad = (balance ?? crop)?.staticPad("sink")
        hasStage = stagePad != nil
        stagePad?.addProbe(.buffer) { [weak self] _, info in
            if let buffer = info.buffer { self?.saw(buffer, at: .element) }
            return .ok
        }
        if segment.deliversDriverFrames, let source = segment.elements.first {
            bin.child(named: source.name)?.staticPad("src")?.addProbe(.buffer) { [weak self] _, info in
                if let buffer = info.buffer { self?.saw(buffer, at: .driver) }
                return .ok
            }
        }
        // The format that leaves the zoom stage is what every branch sees: a zoom must never change it.
        bin.child(named: SourceStages.zoomSize(segment.input))?.staticPad("src")?.addProbe(.eventDownstream) { [weak self] _, info in
            if let caps = info.eventCaps?.description, let self {
                self.capsSeen.withLock { seen in if seen.last != caps { seen.append(caps) } }
            }
            return .ok
        }
        bin.child(named: SourceStages.whiteBalance(segment.input))?.staticPad("src")?.addProbe(.buffer) { [weak self] pad, info in
            guard let self else { return .ok }
            let cast = self.cast.withLock { $0 }
            guard !cast.isNeutral, let caps = pad.currentCaps, let layout = VideoLayout(caps: caps) else { return .ok }
            let info2 = VideoLayoutInfo(format: layout.format, width: layout.width, height: layout.height, strides: layout.strides, offsets: layout.offsets)
            info.withWritableBytes { bytes in cast.apply(to: bytes, layout: info2) }
            return .ok
        }
    }

    /// The formats that left the zoom stage, in order, each once while it lasted: one for as long as
    /// the device format stays, whatever the zoom does.
    var formatsAfterZoom: [String] { capsSeen.withLock { $0 } }

    /// Sets the control elements to `effects` (only what changed); true when anything changed.
    @discardableResult
    func apply(_ effects: SourceEffects) -> Bool {
        let previous = applied.withLock { applied -> SourceEffects? in
            defer { applied = effects }
            return applied
        }
        guard previous != effects else { return false }
        if let balance {
            for (name, value, old) in [
                ("brightness", effects.brightness, previous?.brightness), ("contrast", effects.contrast, previous?.contrast),
                ("saturation", effects.saturation, previous?.saturation), ("hue", effects.hue, previous?.hue),
            ] where value != old {
                try? balance.set(name, value)
            }
        }
        cast.withLock { $0 = effects.cast }
        if let crop, let size = frameSize, effects.zoom != previous?.zoom {
            let (left, right, top, bottom) = Self.crop(size, zoom: effects.zoom)
            try? crop.set("left", left)
            try? crop.set("right", right)
            try? crop.set("top", top)
            try? crop.set("bottom", bottom)
        }
        return true
    }

    /// The crop of a zoom: the centre `1/zoom` of the frame, even values (chroma planes stay aligned).
    static func crop(_ size: Size, zoom: Double) -> (left: Int, right: Int, top: Int, bottom: Int) {
        let factor = max(1, zoom)
        let width = min(size.width, max(16, Int((Double(size.width) / factor).rounded()) & ~1))
        let height = min(size.height, max(16, Int((Double(size.height) / factor).rounded()) & ~1))
        let left = (size.width - width) / 2 & ~1, top = (size.height - height) / 2 & ~1
        return (left, size.width - width - left, top, size.height - height - top)
    }

    /// Changes the control elements to `effects` at a frame boundary and waits for the first frame
    /// that has them. The properties are set by the first stage's probe on the streaming thread,
    /// before that frame enters the stage: a property set from this thread could land while a frame
    /// is already past the probe, which would show the change one frame before the one reported.
    func change(to effects: SourceEffects, _ summary: String) -> Promise<FrameStamp> {
        guard hasStage else {
            apply(effects)
            return arm(summary, stage: .element)
        }
        let promise = Promise<FrameStamp>()
        markers.withLock { markers in
            staged = effects
            markers.append(Marker(summary: summary, stage: .element, after: nil, made: .now, promise: promise))
        }
        pending.add(1, ordering: .relaxed)
        return promise
    }

    /// Waits for the first frame with a change just made. `stage`: how it is recognised.
    func arm(_ summary: String, stage: Stage) -> Promise<FrameStamp> {
        let promise = Promise<FrameStamp>()
        let after = stage == .driver ? bin.runningTime : nil
        markers.withLock { $0.append(Marker(summary: summary, stage: stage, after: after, made: .now, promise: promise)) }
        pending.add(1, ordering: .relaxed)
        return promise
    }

    /// The tap leaves (its source stops): changes still waiting for a frame get none.
    func close() {
        let waiting = markers.withLock { markers in
            defer { markers.removeAll() }
            return markers
        }
        pending.store(0, ordering: .relaxed)
        for marker in waiting { marker.promise.fail(.notRunning(object: "input '\(input)'")) }
    }

    /// Streaming thread: a frame passed a stage.
    private func saw(_ buffer: BufferView, at stage: Stage) {
        guard pending.load(ordering: .relaxed) > 0 else { return }
        let now = ContinuousClock.now
        let pts = buffer.pts
        let sequence = buffer.offset == UInt64.max ? nil : buffer.offset
        var fired: [(Marker, FrameStamp)] = []
        var expired: [Marker] = []
        var effects: SourceEffects?
        markers.withLock { markers in
            if stage == .element {
                effects = staged
                staged = nil
            }
            markers.removeAll { marker in
                if now - marker.made > Self.markerLifetime { expired.append(marker); return true }
                return false
            }
            for index in markers.indices.reversed() where markers[index].stage == stage {
                var marker = markers[index]
                if let after = marker.after, let pts, pts < after {
                    marker.framesBefore += 1
                    markers[index] = marker
                    continue
                }
                fired.append(
                    (
                        marker,
                        FrameStamp(
                            input: input, sequence: sequence, presentationTime: pts.map { .nanoseconds(Int64($0)) },
                            framesBefore: marker.framesBefore, latency: now - marker.made)
                    ))
                markers.remove(at: index)
            }
            pending.store(markers.count, ordering: .relaxed)
        }
        // Still in the probe: the frame enters the stage after this returns, with the new values.
        if let effects { apply(effects) }
        for marker in expired { marker.promise.fail(.timedOut(waitingFor: "a frame after \(marker.summary)", seconds: Self.markerLifetime.seconds)) }
        for (marker, stamp) in fired.reversed() {
            marker.promise.succeed(stamp)
            post(.deviceConfigured(input: input, device: device, change: marker.summary, frame: stamp))
        }
    }
}

/// The names of the control stages of a source segment (`GraphCompiler`), which the tap finds in the
/// running bin.
enum SourceStages {
    static func balance(_ input: String) -> String { "\(input)_balance" }
    static func whiteBalance(_ input: String) -> String { "\(input)_white_balance" }
    static func zoom(_ input: String) -> String { "\(input)_zoom" }
    static func zoomScale(_ input: String) -> String { "\(input)_zoom_scale" }
    static func zoomSize(_ input: String) -> String { "\(input)_zoom_size" }
}
