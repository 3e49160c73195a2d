import CGStreamer
import CGStreamerShim

/// A sample handed to an appsink callback, valid only during the callback.
public struct SampleView {
    let sample: OpaquePointer

    /// The `GstSample`, borrowed for the callback's length (for C helpers that take one).
    public var pointer: OpaquePointer { sample }

    /// The sample's buffer, if it has one. The corresponding C function is `gst_sample_get_buffer`.
    public var buffer: BufferView? {
        gst_sample_get_buffer(sample).map { BufferView(buffer: $0) }
    }

    /// Identifies the sample's caps object: samples of an unchanged stream share it (appsink keeps the
    /// caps until they change), so what is read from the caps can be kept for as long as this is equal.
    public var capsIdentity: UInt {
        UInt(bitPattern: gst_sample_get_caps(sample).map { UnsafeRawPointer($0) })
    }

    /// The first structure of the sample's caps (format, width, height ...).
    public var capsStructure: Structure? {
        guard let caps = gst_sample_get_caps(sample), let structure = gst_caps_get_structure(caps, 0) else { return nil }
        return Structure(copying: structure)
    }
}

private final class AppSinkBox {
    let onSample: @Sendable (SampleView) -> Void
    let onEOS: @Sendable () -> Void
    init(onSample: @escaping @Sendable (SampleView) -> Void, onEOS: @escaping @Sendable () -> Void) {
        self.onSample = onSample
        self.onEOS = onEOS
    }
}

/// Runs on the appsink's streaming thread: pulls the sample and hands a view to the closure.
private let newSampleTrampoline: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = { sink, userData in
    guard let sink, let userData else { return GST_FLOW_OK }
    guard let sample = gst_app_sink_pull_sample(sink) else { return GST_FLOW_EOS }
    defer { gst_mini_object_unref(UnsafeMutableRawPointer(sample).assumingMemoryBound(to: GstMiniObject.self)) }
    capture_tsan_acquire(userData)  // the box came through the appsink's lock (see setAppSinkCallbacks)
    Unmanaged<AppSinkBox>.fromOpaque(userData).takeUnretainedValue().onSample(SampleView(sample: sample))
    return GST_FLOW_OK
}

private let eosTrampoline: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> Void = { _, userData in
    guard let userData else { return }
    capture_tsan_acquire(userData)
    Unmanaged<AppSinkBox>.fromOpaque(userData).takeUnretainedValue().onEOS()
}

private let appSinkDestroy: GDestroyNotify = { userData in
    guard let userData else { return }
    Unmanaged<AppSinkBox>.fromOpaque(userData).release()
}

extension Element {
    /// Installs sample and EOS callbacks on an appsink element. The closures run on the streaming
    /// thread and must not block. The corresponding C function is `gst_app_sink_set_callbacks`.
    public func setAppSinkCallbacks(
        onSample: @escaping @Sendable (SampleView) -> Void,
        onEOS: @escaping @Sendable () -> Void = {}
    ) {
        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = newSampleTrampoline
        callbacks.eos = eosTrampoline
        let box = Unmanaged.passRetained(AppSinkBox(onSample: onSample, onEOS: onEOS)).toOpaque()
        // The appsink keeps the callbacks and its streaming thread reads them under the element's lock, a
        // GMutex ThreadSanitizer cannot see; this and the trampolines' acquire show it the hand-off.
        capture_tsan_release(box)
        gst_app_sink_set_callbacks(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstAppSink.self), &callbacks, box, appSinkDestroy)
    }
}

/// Layout of a raw video frame, read from its caps.
public struct VideoLayout: Sendable, Equatable {
    /// The video format's name ("I420", "NV12", "RGBA" ...).
    public var format: String
    /// The frame width in pixels.
    public var width: Int
    /// The frame height in pixels.
    public var height: Int
    /// Bytes per row of each plane.
    public var strides: [Int]
    /// Byte offset of each plane.
    public var offsets: [Int]
}

extension VideoLayout {
    /// The layout raw video caps describe; nil for caps that are not fixed raw video.
    /// The corresponding C function is `gst_video_info_from_caps`.
    public init?(caps: Caps) {
        guard let layout = Self.read(caps.caps) else { return nil }
        self = layout
    }

    static func read(_ caps: UnsafeMutablePointer<GstCaps>) -> VideoLayout? {
        var info = GstVideoInfo()
        guard gst_video_info_from_caps(&info, caps) != 0, let finfo = info.finfo else { return nil }
        let planes = Int(finfo.pointee.n_planes)
        let strides: [Int] = withUnsafeBytes(of: info.stride) { raw in
            (0..<planes).map { Int(raw.load(fromByteOffset: $0 * MemoryLayout<gint>.stride, as: gint.self)) }
        }
        let offsets: [Int] = withUnsafeBytes(of: info.offset) { raw in
            (0..<planes).map { Int(raw.load(fromByteOffset: $0 * MemoryLayout<gsize>.stride, as: gsize.self)) }
        }
        return VideoLayout(
            format: String(cString: finfo.pointee.name), width: Int(info.width), height: Int(info.height),
            strides: strides, offsets: offsets)
    }
}

extension SampleView {
    /// The raw video layout of the sample, when it is raw video.
    /// The corresponding C function is `gst_video_info_from_caps`.
    public var videoLayout: VideoLayout? {
        guard let caps = gst_sample_get_caps(sample) else { return nil }
        return VideoLayout.read(caps)
    }
}

/// An owned `GstSample` (buffer + caps), to carry a frame off the streaming thread.
public final class Sample: @unchecked Sendable {
    // Samples are immutable once made; only our own reference is released here.
    let sample: OpaquePointer

    /// Takes a new reference on the sample a callback was handed, so it outlives the callback.
    public init(_ view: SampleView) {
        gst_mini_object_ref(UnsafeMutableRawPointer(view.sample).assumingMemoryBound(to: GstMiniObject.self))
        sample = view.sample
    }

    /// Takes over a reference the caller owns.
    init(owning sample: OpaquePointer) { self.sample = sample }

    deinit { gst_mini_object_unref(UnsafeMutableRawPointer(sample).assumingMemoryBound(to: GstMiniObject.self)) }

    /// A view of the sample, to read its buffer and caps.
    public var view: SampleView { SampleView(sample: sample) }

    /// The sample's caps as a string (`video/x-raw, format=(string)I420, ...`).
    public var capsDescription: String? {
        gst_sample_get_caps(sample).map { takeString(gst_caps_to_string($0)) ?? "" }
    }
}

extension Element {
    /// Pushes a sample (its buffer, with its caps) into an appsrc element. The corresponding C function
    /// is `gst_app_src_push_sample`.
    @discardableResult
    public func pushSample(_ sample: Sample) -> Bool {
        gst_app_src_push_sample(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstAppSrc.self), sample.sample) == GST_FLOW_OK
    }
}

extension Sample {
    /// The sample converted to other caps (`image/png`, `image/jpeg`, a raw format or size), by a
    /// small pipeline GStreamer builds for the call. The corresponding C function is
    /// `gst_video_convert_sample`.
    public func converted(to caps: String, timeout: Duration = .seconds(5)) throws(GStreamerError) -> Sample {
        guard let target = gst_caps_from_string(caps) else { throw .invalidCaps(caps) }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(target).assumingMemoryBound(to: GstMiniObject.self)) }
        var error: UnsafeMutablePointer<GError>?
        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000)
        guard let converted = gst_video_convert_sample(sample, target, GstClockTime(nanoseconds), &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "the conversion gave nothing"
            if let error { g_error_free(error) }
            throw .conversionFailed(caps: caps, message: message)
        }
        return Sample(owning: converted)
    }
}

extension Element {
    /// The last sample a sink keeps (`enable-last-sample`), or that of the first sink inside a bin
    /// that wraps one; nil when there is none yet.
    public var lastSample: Sample? {
        capture_element_last_sample(raw).map { Sample(owning: $0) }
    }
}
