import GStreamer
import Synchronization

/// A small pipeline that encodes single frames for a photo output: appsrc, crop, scale, rotation,
/// JPEG (with EXIF through jifmux) or PNG, appsink. Kept while the shot settings stay the same.
final class PhotoEncoder: Sendable {
    let description: String
    private let pipeline: Pipeline
    private let source: Element
    private let exif: Element?
    private let current = Locked<Promise<Sample>?>(nil)
    private let owner: String

    /// Every element an encoder pipeline may use.
    static let factories = ["appsrc", "videoconvert", "videocrop", "videoscale", "videoflip", "jpegenc", "jifmux", "pngenc", "appsink"]

    /// The encoder's gst-launch description for a shot.
    static func description(for resolved: ResolvedPhotoSettings, connection: ConnectionSettings, inputCaps: String) -> String {
        let rotated = connection.rotation == 90 || connection.rotation == 270
        let scaled = rotated ? Size(width: resolved.size.height, height: resolved.size.width) : resolved.size
        var parts = [
            "appsrc name=source format=time caps=\(ElementSpec.quote(inputCaps))",
            "videoconvert",
            "videocrop left=\(resolved.cropLeft) top=\(resolved.cropTop) right=\(resolved.cropRight) bottom=\(resolved.cropBottom)",
            "videoscale add-borders=false",
            "video/x-raw,width=\(scaled.width),height=\(scaled.height),pixel-aspect-ratio=1/1",
        ]
        parts += connection.orientationElements(prefix: "encoder").map(\.launchText)
        switch resolved.codec {
        case .jpeg: parts += ["jpegenc quality=\(resolved.quality)", "jifmux name=exif"]
        case .png: parts += ["videoconvert", "pngenc compression-level=3"]
        }
        parts.append("appsink name=sink sync=false wait-on-eos=false enable-last-sample=false")
        return parts.joined(separator: " ! ")
    }

    init(description: String, owner: String) throws(CaptureError) {
        self.description = description
        self.owner = owner
        do {
            pipeline = try Pipeline.make(name: "photo-encoder")
            let bin = try Bin.parse(description, name: "encoder")
            try pipeline.add(bin)
            guard let source = bin.child(named: "source"), let sink = bin.child(named: "sink") else {
                throw GStreamerError.noSuchPad(element: "encoder", pad: "source/sink")
            }
            self.source = source
            exif = bin.child(named: "exif")
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
