import Foundation
import GStreamer

/// A paused pipeline over a file that hands out single encoded frames: `filesrc ! decodebin !
/// videoconvert ! videoflip (the stream's rotation) ! videocrop ! videoscale ! size ! jpegenc|pngenc !
/// appsink`. Each frame is the appsink's preroll after a flushing seek. Built from element specs; the
/// file name is a property value, never pipeline text. Used from one thread at a time.
final class FrameGrabber {
    /// What each frame is made into.
    struct Shape: Equatable {
        /// Pixels cut from each side, in the picture as shown (after rotation).
        var cropLeft = 0, cropTop = 0, cropRight = 0, cropBottom = 0
        var size: Size
        var codec: PhotoCodec = .jpeg
        var quality = 90
        /// Turn the picture as its `image-orientation` tag says (the track's preferred transform).
        var appliesRotation = true
    }

    let path: String
    private let pipeline: Pipeline
    private let sink: Element
    /// How long one preroll may take (a decode from the keyframe before the position).
    static let prerollTimeout: UInt64 = 30_000_000_000

    static func elements(for shape: Shape) -> [ElementSpec] {
        var elements = [
            ElementSpec("filesrc", name: "grab_source"),
            ElementSpec("decodebin", name: "grab_decode"),
            ElementSpec("videoconvert", name: "grab_convert"),
        ]
        if shape.appliesRotation { elements.append(ElementSpec("videoflip", name: "grab_rotate", [("video-direction", "auto")])) }
        elements += [
            ElementSpec(
                "videocrop", name: "grab_crop",
                [
                    ("left", "\(shape.cropLeft)"), ("top", "\(shape.cropTop)"),
                    ("right", "\(shape.cropRight)"), ("bottom", "\(shape.cropBottom)"),
                ]),
            ElementSpec("videoscale", name: "grab_scale", [("add-borders", "false")]),
            // RGB: the decoder's YUV (limited range for video) is converted to full-range RGB here; a JPEG
            // encoder given the YUV as it is would store it as full range and wash the picture out.
            ElementSpec(
                "capsfilter", name: "grab_size",
                [("caps", "video/x-raw,format=RGB,width=\(shape.size.width),height=\(shape.size.height),pixel-aspect-ratio=1/1")]),
        ]
        switch shape.codec {
        case .jpeg: elements.append(ElementSpec("jpegenc", name: "grab_jpeg", [("quality", "\(shape.quality)")]))
        case .png: elements.append(ElementSpec("pngenc", name: "grab_png", [("compression-level", "3")]))
        }
        elements.append(ElementSpec("appsink", name: "grab_sink", [("sync", "false"), ("max-buffers", "1"), ("enable-last-sample", "false")]))
        return elements
    }

    /// Builds the pipeline and prerolls it on the file's first frame.
    init(path: String, shape: Shape) throws(CaptureError) {
        self.path = path
        do {
            pipeline = try Pipeline.make(name: "frame-grabber")
            let bin = try BinBuilder.bin(named: "grabber", chains: [Chain(input: nil, elements: Self.elements(for: shape))])
            try bin.child(named: "grab_source")?.set("location", path)
            try pipeline.add(bin)
            guard let sink = bin.child(named: "grab_sink") else { throw GStreamerError.noSuchPad(element: "grabber", pad: "sink") }
            self.sink = sink
        } catch let error as GStreamerError {
            throw CaptureError(error, object: "the image generator for \(path)")
        } catch {
            throw .editingFailed(path: path, reason: "\(error)")
        }
        do {
            try pipeline.setState(.paused)
        } catch {
            _ = try? pipeline.setState(.null)
            throw .editingFailed(path: path, reason: "the pipeline would not start: \(error)")
        }
        do throws(CaptureError) {
            try waitForPreroll("the first frame")
        } catch {
            _ = try? pipeline.setState(.null)
            throw error
        }
    }

    deinit {
        _ = try? pipeline.setState(.null)
        pipeline.bus.setFlushing(true)
    }

    /// The encoded frame at `time` (nanoseconds; nil: where the pipeline is) and the time of the frame
    /// that was taken. An accurate seek takes the frame on screen at `time`: the last one that starts
    /// at or before it (played backwards from just after `time`, the first frame out is that one,
    /// whatever the gaps between frames of a variable frame rate); other seeks go forwards.
    func frame(at time: UInt64?, flags: SeekFlags) throws(CaptureError) -> (bytes: [UInt8], time: UInt64) {
        if let time {
            let seeked =
                flags.contains(.accurate)
                ? pipeline.seek(start: 0, stop: time + 1, rate: -1, flags: flags.union(.flush))
                : pipeline.seek(start: time, flags: flags.union(.flush))
            guard seeked else {
                throw .editingFailed(path: path, reason: "the file cannot be seeked")
            }
            try waitForPreroll("the frame at \(CaptureError.seconds(Double(time) / 1e9)) s")
        }
        guard let sample = sink.pullPreroll(timeout: Self.prerollTimeout) else {
            throw .editingFailed(path: path, reason: "no frame came out of the decoder")
        }
        let bytes = sample.bytes
        guard !bytes.isEmpty else { throw .editingFailed(path: path, reason: "the encoder gave an empty image") }
        return (bytes, sample.streamTime ?? time ?? 0)
    }

    /// Waits (bounded) for the pipeline to preroll; an error on the bus fails with its message.
    private func waitForPreroll(_ what: String) throws(CaptureError) {
        let deadline = ContinuousClock.now + .nanoseconds(Int64(Self.prerollTimeout))
        while ContinuousClock.now < deadline {
            guard let message = pipeline.bus.pop(timeout: 500_000_000, kinds: [.asyncDone, .error, .eos]) else { continue }
            switch message.kind {
            case .asyncDone: return
            case .eos: throw .editingFailed(path: path, reason: "the file ended before \(what)")
            default: throw .editingFailed(path: path, reason: message.error?.description ?? "GStreamer failed while decoding \(what)")
            }
        }
        throw .timedOut(waitingFor: "\(what) of \(path)", seconds: Double(Self.prerollTimeout) / 1e9)
    }

    /// The largest size with the aspect ratio of `source` that fits in `bounds` and is not larger
    /// than `source` (even numbers, at least 2x2), as `AVAssetImageGenerator.maximumSize` bounds the
    /// images without enlarging them; `source` itself without bounds.
    static func fitted(_ source: Size, in bounds: Size?) -> Size {
        guard let bounds else { return source }
        let scale = min(1, Double(bounds.width) / Double(source.width), Double(bounds.height) / Double(source.height))
        return Size(width: max(2, Int((Double(source.width) * scale).rounded()) & ~1), height: max(2, Int((Double(source.height) * scale).rounded()) & ~1))
    }
}
