import Capture
import CaptureControl
import Foundation

extension Action {
    /// The controller's command for this action: the declarations it holds built into Capture objects
    /// (an input, an output, an overlay) with `builder`; nil for the statements that belong to a
    /// scenario (`wait`, `expect`, `repeat`, a configuration block). `onNote` hears when a virtual
    /// device stands in for a missing one. With `session`, a metadata output's `highlight=` is resolved
    /// against its outputs (`preview`: every preview output) before the output is added.
    public func command(builder: SessionBuilder, session: CaptureSession? = nil, onNote: (String) -> Void = { _ in }) throws(CaptureError) -> ControlCommand? {
        switch self {
        case .start: return .start
        case .stop: return .stop
        case .wait, .configuration, .expect, .repeat: return nil
        case .capturePhoto(let request):
            return .takePhoto(
                PhotoRequest(
                    output: request.output, location: request.location, count: request.count ?? 1, interval: request.interval,
                    flashMode: request.flashMode, tags: request.tags))
        case .startRecording(let output, let location): return .startRecording(output: output, location: location)
        case .stopRecording(let output): return .stopRecording(output: output)
        case .pauseRecording(let output): return .pauseRecording(output: output)
        case .resumeRecording(let output): return .resumeRecording(output: output)
        case .addInput(let declaration):
            let (input, note) = try builder.makeInput(declaration)
            if let note { onNote(note) }
            return .addInput(input)
        case .addOutput(let declaration):
            let output = try builder.makeOutput(declaration)
            if case .metadata(let keys) = declaration.settings, let highlight = keys.highlight, let session, let metadata = output as? CaptureMetadataOutput {
                metadata.highlightOutputs = try OverlayTargets.outputs(highlight, overlay: metadata.highlightOverlayName, in: session).map(\.name)
            }
            return .addOutput(output)
        case .removeInput(let name): return .removeInput(name: name)
        case .removeOutput(let name): return .removeOutput(name: name)
        case .setPreset(let preset): return .setPreset(preset)
        case .configureDevice(let configuration):
            return .configureDevice(input: configuration.input) { device throws(CaptureError) in _ = try configuration.apply(to: device) }
        case .addOverlay(let declaration):
            // The text as written: the controller fills its placeholders and keeps them up to date.
            guard let overlay = declaration.fields.overlay(named: declaration.name, resolvingPath: builder.resolvedInputPath) else {
                throw .invalidOverlay(overlay: declaration.name, key: "content", reason: "is missing: give text, clock, image or a shape")
            }
            return .addOverlay(overlay, outputs: declaration.outputs)
        case .setOverlay(let declaration):
            let fields = declaration.fields
            return .updateOverlay(name: declaration.name, outputs: declaration.outputs) { overlay in
                fields.applied(to: overlay, resolvingPath: builder.resolvedInputPath)
            }
        case .removeOverlay(let name, let outputs): return .removeOverlay(name: name, outputs: outputs)
        case .toggleFlash(let output): return .toggleFlash(output: output)
        case .switchCamera(let position): return .switchCamera(position: position)
        case .trimVideo(let request):
            return .trim(
                VideoTrimRequest(
                    source: request.source.video, from: request.from, to: request.to, location: request.location,
                    mode: request.mode, saveToLibrary: request.saveToLibrary == true))
        case .generateThumbnail(let request):
            let time: AssetImageGenerator.Time =
                switch request.at {
                case .seconds(let seconds): .seconds(seconds)
                case .percent(let percent): .fraction(percent / 100)
                }
            return .thumbnail(VideoThumbnailRequest(source: request.source.video, time: time, maximumSize: request.size, location: request.location))
        case .pickFromLibrary(let pick): return .pickFromLibrary(pick)
        }
    }
}

extension MediaSource {
    /// The controller's video source.
    var video: VideoSource {
        switch self {
        case .file(let path): .file(path)
        case .recording(let output): .lastRecording(output: output)
        case .picked(let name): .picked(name)
        }
    }
}

extension OutputKind {
    /// The kind of a session's output (nil for outputs no `.pipeline` statement declares, like the web
    /// previews `capture serve` adds).
    public init?(of output: CaptureOutput) {
        switch output {
        case is CapturePhotoOutput: self = .photo
        case is CaptureMovieFileOutput: self = .movie
        case is CaptureMetadataOutput: self = .metadata
        case is CaptureVideoDataOutput, is CaptureImageSequenceOutput: self = .frames
        case is CaptureVideoPreviewOutput: self = .preview
        case is CaptureStreamOutput: self = .stream
        default: return nil
        }
    }
}
