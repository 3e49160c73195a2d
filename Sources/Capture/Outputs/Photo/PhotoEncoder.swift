import GStreamer
import Synchronization

/// A small pipeline that encodes single frames for a photo output: appsrc, crop, scale, rotation,
/// JPEG (with EXIF through jifmux) or PNG, appsink. Kept while the shot settings stay the same.
final class PhotoEncoder: Sendable {
    /// What the encoder was built from (an encoder is reused while a shot needs the same).
    let elements: [ElementSpec]
    /// The turn viewers apply to the photo (its EXIF Orientation): the overlays are drawn upright as shown.
    let shownTurned: PixelTurn
    private let pipeline: Pipeline
    private let source: Element
    private let exif: Element?
    private let current = Locked<Promise<Sample>?>(nil)
    private let owner: String

    /// Every element an encoder pipeline may use.
    static let factories = ["appsrc", "videoconvert", "videocrop", "videoscale", "videoflip", "overlaycomposition", "jpegenc", "jifmux", "pngenc", "appsink"]

    /// The encoder's element that draws the output's overlays.
    static let overlayName = "encoder_overlay"

    /// The encoder's elements for a shot, in order: appsrc ! convert ! crop ! scale ! size ! [rotate]
    /// ! jpegenc ! jifmux ! appsink (or pngenc). The rotation is there only when the connection
    /// `rotatesPixels`; otherwise the photo keeps the camera's pixels and its tags say how to show them.
    static func elements(for resolved: ResolvedPhotoSettings, connection: ConnectionSettings, inputCaps: String) -> [ElementSpec] {
        let rotated = connection.rotation == 90 || connection.rotation == 270
        let scaled = rotated ? Size(width: resolved.size.height, height: resolved.size.width) : resolved.size
        var elements = [
            ElementSpec("appsrc", name: "source", [("format", "time"), ("caps", inputCaps)]),
            ElementSpec("videoconvert", name: "encoder_convert"),
            ElementSpec(
                "videocrop", name: "encoder_crop",
                [
                    ("left", "\(resolved.cropLeft)"), ("top", "\(resolved.cropTop)"),
                    ("right", "\(resolved.cropRight)"), ("bottom", "\(resolved.cropBottom)"),
                ]),
            ElementSpec("videoscale", name: "encoder_scale", [("add-borders", "false")]),
            ElementSpec("capsfilter", name: "encoder_size", [("caps", "video/x-raw,width=\(scaled.width),height=\(scaled.height),pixel-aspect-ratio=1/1")]),
        ]
        if connection.rotatesPixels { elements += connection.orientationElements(prefix: "encoder") }
        // The output's overlays, drawn on the photo as it is saved (after crop, scale and rotation).
        elements.append(ElementSpec("overlaycomposition", name: overlayName))
        switch resolved.codec {
        case .jpeg:
            elements += [ElementSpec("jpegenc", name: "encoder_jpeg", [("quality", "\(resolved.quality)")]), ElementSpec("jifmux", name: "exif")]
        case .png:
            elements += [ElementSpec("videoconvert", name: "encoder_png_convert"), ElementSpec("pngenc", name: "encoder_png", [("compression-level", "3")])]
        }
        elements.append(ElementSpec("appsink", name: "sink", [("sync", "false"), ("wait-on-eos", "false"), ("enable-last-sample", "false")]))
        return elements
    }

    /// The encoder in gst-launch syntax (what `capture compile` shows; never parsed).
    static func description(for resolved: ResolvedPhotoSettings, connection: ConnectionSettings, inputCaps: String) -> String {
        Chain(input: nil, elements: elements(for: resolved, connection: connection, inputCaps: inputCaps)).launchText
    }

    init(elements: [ElementSpec], owner: String, overlays: OverlayCanvas, shownTurned: PixelTurn) throws(CaptureError) {
        self.elements = elements
        self.shownTurned = shownTurned
        self.owner = owner
        do {
            pipeline = try Pipeline.make(name: "photo-encoder")
            let bin = try BinBuilder.bin(named: "encoder", chains: [Chain(input: nil, elements: elements)])
            try pipeline.add(bin)
            guard let source = bin.child(named: "source"), let sink = bin.child(named: "sink") else {
                throw GStreamerError.noSuchPad(element: "encoder", pad: "source/sink")
            }
            self.source = source
            exif = bin.child(named: "exif")
            if let overlay = bin.child(named: Self.overlayName) { overlays.connect(overlay, shownTurned: shownTurned) }
            let current = self.current
            sink.setAppSinkCallbacks(onSample: { sample in
                current.value?.succeed(Sample(sample))
            })
            pipeline.bus.setSyncHandler { [owner] message in
                guard message.kind == .error, let error = message.error else { return }
                current.value?.fail(.streamingFailed(element: "\(owner) encoder (\(error.source))", message: error.message, debug: error.debug))
            }
            try pipeline.setState(.playing)
        } catch let error as GStreamerError {
            throw CaptureError(error, object: "\(owner) encoder")
        } catch {
            throw .pipelineBuildFailed(object: "\(owner) encoder", reason: "\(error)")
        }
    }

    deinit {
        _ = try? pipeline.setState(.null)
        pipeline.bus.setFlushing(true)
        pipeline.bus.removeSyncHandler()
    }

    /// Encodes one frame. Calls are serialized by the photo output.
    func encode(_ sample: Sample, tags: String?, timeout: Duration) async throws(CaptureError) -> Sample {
        let promise = Promise<Sample>()
        current.value = promise
        if let tags { exif?.setTags(tags) }
        guard source.pushSample(sample) else {
            throw .streamingFailed(element: "\(owner) encoder", message: "the encoder refused the frame", debug: nil)
        }
        defer { current.value = nil }
        return try await promise.value(timeout: timeout, timeoutError: .captureTimedOut(output: owner, seconds: timeout.seconds))
    }
}
