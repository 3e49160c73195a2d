import CGStreamer
import CGStreamerShim

/// Encoded samples handed from one pipeline to another (an appsink's samples pushed into an appsrc):
/// their times, their key-frame flag, the pushes that move their timestamps, and the request for a
/// key frame sent back to their encoder.
extension SampleView {
    /// The presentation time of the sample's buffer in nanoseconds; nil when it has none (or no buffer).
    public var presentationTime: UInt64? {
        let time = UInt64(capture_sample_pts(sample))
        return time == UInt64.max ? nil : time
    }

    /// The running time of the sample's buffer in nanoseconds: its presentation time through the
    /// sample's segment (an encoder may move its timestamps, x264enc by 1000 hours, and its segment with
    /// them); nil when the buffer has no time or the segment puts it outside. The corresponding C
    /// function is `gst_segment_to_running_time`.
    public var runningTime: UInt64? {
        let time = UInt64(capture_sample_running_time(sample))
        return time == UInt64.max ? nil : time
    }

    /// True when the sample's buffer decodes on its own (no `GST_BUFFER_FLAG_DELTA_UNIT`); false for
    /// a sample without a buffer.
    public var isKeyFrame: Bool { capture_sample_is_key_frame(sample) != 0 }
}

extension Element {
    /// Pushes a copy of the sample's buffer (sharing its memory) into this appsrc, its timestamps moved
    /// back by `shift` nanoseconds (none goes below 0): a file whose first frame was encoded before it
    /// was opened starts at 0. The appsrc takes the sample's caps first when they differ. True when the
    /// appsrc accepted it. The corresponding C function is `gst_app_src_push_buffer`.
    @discardableResult
    public func pushSample(_ sample: SampleView, shiftedBackBy shift: UInt64) -> Bool {
        capture_appsrc_push_shifted(element, sample.sample, guint64(shift)) == GST_FLOW_OK.rawValue
    }

    /// Pushes a copy of the sample's buffer (sharing its memory) into this live appsrc of another
    /// pipeline, retimed from the sample's running time onto that pipeline's by `offset`: set at the
    /// first sample once the pipeline has a clock (start it at `AppSourceRetiming.unset`), and shared
    /// by the audio and the video of one receiver so that they stay in sync. The appsrc takes the
    /// sample's caps first when they differ. The corresponding C function is `gst_app_src_push_buffer`.
    public func pushSample(_ sample: SampleView, retiming offset: inout AppSourceRetiming) {
        capture_appsrc_push_retimed(element, sample.sample, &offset.nanoseconds)
    }
}

/// The offset that moves samples of one pipeline onto the running time of another
/// (`Element.pushSample(_:retiming:)`), fixed at the first sample pushed.
public struct AppSourceRetiming: Sendable, Equatable {
    /// Nanoseconds added to a sample's running time; `Int.min` until the first push sets it.
    public var nanoseconds: Int

    /// Not set yet: the first push sets it.
    public static let unset = AppSourceRetiming(nanoseconds: Int.min)

    /// An offset of `nanoseconds`.
    public init(nanoseconds: Int) { self.nanoseconds = nanoseconds }
}

extension Pad {
    /// Pushes a force-key-unit request (with SPS/PPS) from this sink pad to its peer, upstream towards
    /// the encoder: the encoder makes a key frame soon. True when an element upstream handled it. The
    /// corresponding C function is `gst_video_event_new_upstream_force_key_unit`.
    @discardableResult
    public func pushKeyFrameRequest() -> Bool { capture_request_key_frame(pad) != 0 }
}

/// A pad known by its address, without a reference on it: for a callback that runs only while the pad
/// lives (an appsink's callback on that appsink's own streaming thread), where a `Pad` it held would
/// keep the element alive.
public struct UnownedPad: Sendable {
    private let address: UInt

    /// The address of `pad`; valid for as long as the pad lives, which the caller ensures.
    public init(_ pad: Pad) { address = UInt(bitPattern: pad.pad) }

    /// `Pad.pushKeyFrameRequest()` on the pad. Only while the pad lives.
    @discardableResult
    public func pushKeyFrameRequest() -> Bool {
        guard let pad = UnsafeMutablePointer<GstPad>(bitPattern: address) else { return false }
        return capture_request_key_frame(pad) != 0
    }
}
