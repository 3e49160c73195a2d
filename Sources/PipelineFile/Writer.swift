import Capture
import CaptureControl
import GStreamer

extension PipelineDocument {
    /// The document as `.pipeline` text: the session, inputs, outputs and overlays, then the scenario
    /// (configuration blocks indented). Reading the text back gives a document equal to this one.
    public var pipelineText: String {
        var lines: [String] = []
        if let preset = session.preset {
            lines.append(
                PipelineWriter.statement(
                    "session",
                    [
                        ("preset", .string(preset.rawValue)),
                        ("fallback-preset", session.fallbackPreset.map { .string($0.rawValue) }),
                    ]))
        }
        lines += inputs.map { PipelineWriter.statement("input", PipelineWriter.fields(of: $0)) }
        lines += outputs.map { PipelineWriter.statement("output", PipelineWriter.fields(of: $0)) }
        lines += overlays.map { PipelineWriter.statement("overlay", PipelineWriter.fields(of: $0)) }
        if !scenario.isEmpty {
            if !lines.isEmpty { lines.append("") }
            lines += scenario.flatMap { PipelineWriter.lines(of: $0, indent: "") }
        }
        return lines.map { $0 + "\n" }.joined()
    }
}

/// Writes statements in the syntax the reader reads.
enum PipelineWriter {
    typealias Fields = [(String, PipelineValue?)]

    static func statement(_ name: String, _ fields: Fields) -> String {
        ([name] + fields.compactMap { key, value in value.map { "\(key)=\(write($0))" } }).joined(separator: ", ")
    }

    /// A value in the structure syntax. Strings stay bare when they are plain words the parser reads
    /// back as the same string; all others are double-quoted with `"` and `\` escaped.
    static func write(_ value: PipelineValue) -> String {
        switch value {
        case .string(let text): return word(text)
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .fraction(let numerator, let denominator): return "\(numerator)/\(denominator)"
        case .list(let items): return items.isEmpty ? "{ }" : "{ " + items.map(write).joined(separator: ", ") + " }"
        case .array(let items): return items.isEmpty ? "< >" : "< " + items.map(write).joined(separator: ", ") + " >"
        case .unsupported(_, let text): return text
        }
    }

    static func word(_ text: String) -> String {
        // Bare when GStreamer reads the bare word back as this very string (not a number, a boolean ...).
        if !text.isEmpty, text.utf8.allSatisfy(Lexer.isStringByte), let (structure, _) = Structure.parse("v, v=\(text)"),
            structure.typeName("v") == "gchararray", structure.string("v") == text
        {
            return text
        }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }

    static func expectError(_ expected: ExpectedError?) -> PipelineValue? {
        switch expected {
        case nil: nil
        case .any: .bool(true)
        case .named(let name): .string(name)
        }
    }

    static func fields(of input: InputDeclaration) -> Fields {
        [
            ("name", .string(input.name)), ("device", .string(input.device)), ("media", input.media.map { .string($0.rawValue) }),
            ("pattern", input.pattern.map(PipelineValue.string)), ("size", input.size.map(ValueSyntax.write)),
            ("framerate", input.frameRate.map(ValueSyntax.write)), ("fail-after", input.failAfterFrames.map(PipelineValue.int)),
            ("reconnect", input.reconnect.map(PipelineValue.bool)), ("fallback", input.fallback.map(PipelineValue.string)),
        ]
    }

    static func fields(of output: OutputDeclaration) -> Fields {
        var fields: Fields = [
            ("name", .string(output.name)), ("kind", .string(output.kind.rawValue)),
            ("input", output.input.map(PipelineValue.string)), ("rotation", output.rotation.map(PipelineValue.int)),
            ("mirrored", output.mirrored.map(PipelineValue.bool)), ("rotate-pixels", output.rotatePixels.map(PipelineValue.bool)),
        ]
        switch output.settings {
        case .photo(let photo):
            fields += [
                ("codec", photo.codec.map { .string($0.rawValue) }), ("quality", photo.quality.map(PipelineValue.int)),
                ("location", photo.location.map(PipelineValue.string)), ("size", photo.size.map(ValueSyntax.write)),
                ("zero-shutter-lag", photo.zeroShutterLag.map(PipelineValue.bool)), ("crop", photo.crop.map(ValueSyntax.write)),
                ("save-to-library", photo.saveToLibrary.map(PipelineValue.bool)), ("overwrite", photo.overwrite.map(PipelineValue.bool)),
            ]
        case .movie(let movie):
            fields += [
                ("location", movie.location.map(PipelineValue.string)), ("container", movie.container.map { .string($0.rawValue) }),
                ("video-codec", movie.videoCodec.map { .string($0.rawValue) }), ("audio-codec", movie.audioCodec.map { .string($0.rawValue) }),
                ("bitrate", movie.bitrate.map(ValueSyntax.write(bitrate:))), ("max-duration", movie.maxDuration.map(ValueSyntax.write)),
                ("max-file-size", movie.maxFileSize.map(ValueSyntax.write(bytes:))),
                ("min-free-disk-space", movie.minFreeDiskSpace.map(ValueSyntax.write(bytes:))),
                ("fragment-interval", movie.fragmentInterval.map(ValueSyntax.write)),
                ("save-to-library", movie.saveToLibrary.map(PipelineValue.bool)),
                ("pre-roll", movie.preRoll.map(ValueSyntax.write)), ("encoder", movie.encoder.map { .string($0.description) }),
                ("overwrite", movie.overwrite.map(PipelineValue.bool)),
            ]
        case .metadata(let metadata):
            fields += [
                ("types", metadata.types.map { .list($0.map { .string($0.rawValue) }) }),
                ("rect-of-interest", metadata.rectOfInterest.map(ValueSyntax.write)), ("backend", metadata.backend.map { .string($0.rawValue) }),
                ("highlight", metadata.highlight.map { $0.count == 1 ? .string($0[0]) : .list($0.map(PipelineValue.string)) }),
                ("delivery", metadata.delivery.map { .string($0.rawValue) }),
                ("discard-late-frames", metadata.discardLateFrames.map(PipelineValue.bool)),
            ]
        case .frames(let frames):
            fields += [
                ("location", frames.location.map(PipelineValue.string)), ("max-rate", frames.maxRate.map(PipelineValue.double)),
                ("size", frames.size.map(ValueSyntax.write)),
            ]
        case .preview(let preview):
            fields += [
                ("sink", preview.sink.map { .string($0.rawValue) }), ("window", preview.window.map { .string("0x" + String($0, radix: 16)) }),
                ("gravity", preview.gravity.map { .string($0.rawValue) }), ("size", preview.size.map(ValueSyntax.write)),
            ]
        case .stream(let stream):
            fields += [
                ("serve", stream.serve.map(PipelineValue.string)), ("publish", stream.publish.map(PipelineValue.string)),
                ("bitrate", stream.bitrate.map(ValueSyntax.write(bitrate:))), ("audio-codec", stream.audioCodec.map { .string($0.rawValue) }),
                ("size", stream.size.map(ValueSyntax.write)), ("encoder", stream.encoder.map { .string($0.description) }),
            ]
        }
        return fields
    }

    static func fields(of overlay: OverlayDeclaration) -> Fields {
        let outputs: PipelineValue? =
            switch overlay.outputs.count {
            case 0: nil
            case 1: .string(overlay.outputs[0])
            default: .list(overlay.outputs.map(PipelineValue.string))
            }
        let fields = overlay.fields
        let position: PipelineValue? = fields.position.map { position in
            if case .point(let x, let y) = position { return ValueSyntax.write(NormalizedPoint(x: x, y: y)) }
            return .string(CaptureOverlay.Position.named.first { $0.position == position }?.name ?? "top-left")
        }
        return [
            ("name", .string(overlay.name)), ("output", outputs), ("text", fields.text.map(PipelineValue.string)),
            ("clock", fields.clock.map { .string($0.rawValue) }), ("image", fields.image.map(PipelineValue.string)),
            ("width", fields.width.map(PipelineValue.double)), ("rectangle", fields.rectangle.map(ValueSyntax.write)),
            ("line", fields.line.map(ValueSyntax.write)), ("polygon", fields.polygon.map(ValueSyntax.write)),
            ("font", fields.font.map(PipelineValue.string)), ("size", fields.size.map(PipelineValue.double)),
            ("color", fields.color.map { .string($0.description) }), ("background", fields.background.map { .string($0.description) }),
            ("line-width", fields.lineWidth.map(PipelineValue.double)), ("fill", fields.fill.map { .string($0.description) }),
            ("position", position), ("alpha", fields.alpha.map(PipelineValue.double)),
        ]
    }

    static func fields(of source: MediaSource) -> Fields {
        switch source {
        case .file(let path): [("input", .string(path))]
        case .recording(let output): [("recording", .string(output))]
        case .picked(let name): [("picked", .string(name))]
        }
    }

    static func fields(of matcher: EventMatcher) -> Fields {
        [
            ("event", .string(matcher.event)), ("output", matcher.output.map(PipelineValue.string)),
            ("type", matcher.type.map(PipelineValue.string)), ("value", matcher.value.map(PipelineValue.string)),
            ("swapped", matcher.swapped.map(PipelineValue.string)),
        ]
    }

    /// The lines of one step (a configuration block takes several; its statements are indented).
    static func lines(of step: ScenarioStep, indent: String) -> [String] {
        let expect = ("expect-error", expectError(step.expectedError))
        func line(_ name: String, _ fields: Fields) -> [String] { [indent + statement(name, fields + [expect])] }
        switch step.action {
        case .start: return line("start", [])
        case .stop: return line("stop", [])
        case .wait(.duration(let duration)):
            return line("wait", [("duration", ValueSyntax.write(duration))])
        case .wait(.event(let matcher, let count, let timeout)):
            return line("wait", fields(of: matcher) + [("count", count.map(PipelineValue.int)), ("timeout", timeout.map(ValueSyntax.write))])
        case .capturePhoto(let request):
            return line(
                "capture-photo",
                [
                    ("output", .string(request.output)), ("location", request.location.map(PipelineValue.string)),
                    ("count", request.count.map(PipelineValue.int)), ("interval", request.interval.map(ValueSyntax.write)),
                    ("flash-mode", request.flashMode.map { .string($0.rawValue) }),
                    ("comment", request.tags.comment.map(PipelineValue.string)),
                    ("description", request.tags.description.map(PipelineValue.string)),
                    ("latitude", request.tags.latitude.map(PipelineValue.double)),
                    ("longitude", request.tags.longitude.map(PipelineValue.double)),
                    ("altitude", request.tags.altitude.map(PipelineValue.double)),
                ])
        case .startRecording(let output, let location):
            return line("start-recording", [("output", .string(output)), ("location", location.map(PipelineValue.string))])
        case .stopRecording(let output): return line("stop-recording", [("output", .string(output))])
        case .pauseRecording(let output): return line("pause-recording", [("output", .string(output))])
        case .resumeRecording(let output): return line("resume-recording", [("output", .string(output))])
        case .configuration(let block):
            return [indent + "begin-configuration"]
                + block.steps.flatMap { lines(of: $0, indent: indent + "    ") }
                + [indent + statement("commit-configuration", [("expect-error", expectError(block.commitExpectedError))])]
        case .addInput(let input): return line("add-input", fields(of: input))
        case .addOutput(let output): return line("add-output", fields(of: output))
        case .removeInput(let name): return line("remove-input", [("name", .string(name))])
        case .removeOutput(let name): return line("remove-output", [("name", .string(name))])
        case .setPreset(let preset): return line("set-preset", [("preset", .string(preset.rawValue))])
        case .configureDevice(let settings):
            return line(
                "configure-device",
                [
                    ("input", .string(settings.input)), ("focus-mode", settings.focusMode.map { .string($0.rawValue) }),
                    ("focus-point", settings.focusPoint.map(ValueSyntax.write)), ("exposure-mode", settings.exposureMode.map { .string($0.rawValue) }),
                    ("exposure-point", settings.exposurePoint.map(ValueSyntax.write)), ("exposure-bias", settings.exposureBias.map(PipelineValue.double)),
                    ("white-balance-mode", settings.whiteBalanceMode.map { .string($0.rawValue) }),
                    ("torch-mode", settings.torchMode.map { .string($0.rawValue) }),
                    ("torch-level", settings.torchLevel.map(PipelineValue.double)), ("flash-mode", settings.flashMode.map { .string($0.rawValue) }),
                    ("zoom", settings.zoom.map(PipelineValue.double)), ("low-light-boost", settings.lowLightBoost.map(PipelineValue.bool)),
                    ("lens-position", settings.lensPosition.map(PipelineValue.double)),
                    ("exposure-duration", settings.exposureDuration.map(ValueSyntax.write)), ("gain", settings.gain.map(PipelineValue.int)),
                    ("white-balance-temperature", settings.whiteBalanceTemperature.map(PipelineValue.int)),
                    ("controls", settings.controls.isEmpty ? nil : .list(settings.controls.map { .string($0.description) })),
                ])
        case .addOverlay(let overlay): return line("add-overlay", fields(of: overlay))
        case .setOverlay(let overlay): return line("set-overlay", fields(of: overlay))
        case .removeOverlay(let name, let outputs):
            return line(
                "remove-overlay",
                [("name", .string(name))] + fields(of: OverlayDeclaration(name: name, outputs: outputs, fields: OverlayFields())).filter { $0.0 == "output" })
        case .toggleFlash(let output): return line("toggle-flash", [("output", output.map(PipelineValue.string))])
        case .switchCamera(let position): return line("switch-camera", [("position", position.map { .string($0.rawValue) })])
        case .trimVideo(let request):
            return line(
                "trim-video",
                fields(of: request.source) + [
                    ("from", .double(request.from)), ("to", .double(request.to)), ("location", .string(request.location)),
                    ("exact", request.exact.map(PipelineValue.bool)), ("fast", request.fast.map(PipelineValue.bool)),
                    ("save-to-library", request.saveToLibrary.map(PipelineValue.bool)),
                ])
        case .generateThumbnail(let request):
            let at: PipelineValue =
                switch request.at {
                case .seconds(let seconds): .double(seconds)
                case .percent(let percent): .string((percent == percent.rounded() ? String(Int(percent)) : String(percent)) + "%")
                }
            return line(
                "generate-thumbnail",
                fields(of: request.source) + [
                    ("at", at), ("location", .string(request.location)), ("size", request.size.map(ValueSyntax.write)),
                ])
        case .pickFromLibrary(let pick):
            return line(
                "pick-from-library",
                [("name", .string(pick.name)), ("kind", pick.kind.map { .string($0.rawValue) }), ("file", pick.file.map(PipelineValue.string))])
        case .expect(let expectation):
            let quantity: (String, PipelineValue?) =
                switch expectation.quantity {
                case .exactly(let count): ("count", .int(count))
                case .atLeast(let count): ("at-least", .int(count))
                }
            return line("expect", fields(of: expectation.matcher) + [quantity])
        case .repeat(let count, let steps):
            let repeated = steps.flatMap { lines(of: $0, indent: "") }.map(PipelineValue.string)
            return line("repeat", [("count", .int(count)), ("actions", .list(repeated))])
        }
    }
}

/// A session output that no `.pipeline` statement describes yet (an output class the format does not know).
public struct UnrepresentableOutputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The output's name.
    public var name: String
    /// `CaptureOutput.kind` of the output.
    public var kind: String

    /// A sentence naming the output and its kind.
    public var description: String {
        "the \(kind) output '\(name)' has no .pipeline form in this version of capture"
    }
}

extension PipelineDocument {
    /// The declarations of a configured session: its preset, inputs and outputs (no scenario). Written
    /// back with `pipelineText`, this is the session as a `.pipeline` file.
    public init(session: CaptureSession) throws(UnrepresentableOutputError) {
        let inputs = session.inputs.map { input -> InputDeclaration in
            let device = input.device.uniqueID
            var declaration = InputDeclaration(name: input.name, device: device)
            if declaration.knownMedia == nil { declaration.media = input.mediaType }
            declaration.pattern = input.options.pattern
            declaration.size = input.options.size
            declaration.frameRate = input.options.frameRate.map(ValueSyntax.reduced)
            declaration.failAfterFrames = input.options.failAfterFrames
            declaration.reconnect = input.options.reconnects ? true : nil
            return declaration
        }
        var outputs: [OutputDeclaration] = []
        for output in session.outputs {
            let settings: OutputSettings
            switch output {
            case let sequence as CaptureImageSequenceOutput:
                settings = .frames(FramesOutputSettings(location: sequence.location, maxRate: sequence.maxFrameRate, size: sequence.size))
            case let frames as CaptureVideoDataOutput:
                settings = .frames(FramesOutputSettings(maxRate: frames.maxFrameRate, size: frames.size))
            case let preview as CaptureVideoPreviewOutput:
                settings = .preview(
                    PreviewOutputSettings(
                        sink: preview.sink, window: preview.windowHandle, gravity: preview.videoGravity == .resizeAspect ? nil : preview.videoGravity,
                        size: preview.windowHandle == nil ? preview.viewSize : nil))
            case let stream as CaptureStreamOutput:
                let keys = stream.settings
                var streamSettings = StreamOutputSettings(bitrate: keys.bitRate, audioCodec: keys.audioCodec, size: keys.size)
                switch stream.destination {
                case .serve(let url): streamSettings.serve = url.description
                case .publish(let url): streamSettings.publish = url.fullDescription
                }
                settings = .stream(streamSettings)
            case let photo as CapturePhotoOutput:
                let defaults = photo.defaults
                settings = .photo(
                    PhotoOutputSettings(
                        codec: defaults.codec, quality: defaults.codec == .jpeg ? defaults.quality : nil,
                        location: defaults.location, size: defaults.size, zeroShutterLag: defaults.zeroShutterLag,
                        crop: defaults.crop, saveToLibrary: defaults.library == nil ? nil : true,
                        overwrite: defaults.overwritesExistingFile ? true : nil))
            default:
                throw UnrepresentableOutputError(name: output.name, kind: output.kind)
            }
            let connection = output.connection
            outputs.append(
                OutputDeclaration(
                    name: output.name, input: connection.input, rotation: connection.rotation == 0 ? nil : connection.rotation,
                    mirrored: connection.isMirrored ? true : nil, rotatePixels: connection.rotatesPixels ? true : nil, settings: settings))
        }
        self.init(session: SessionSettings(preset: session.sessionPreset), inputs: inputs, outputs: outputs)
    }
}
