import Capture
import Foundation

/// The declarations of a file (`input`, `output`, `overlay`, and the actions that add them): names, fields
/// and output settings, each checked where it is written.
extension Checker {
    mutating func declare(_ statement: Statement) {
        switch statement.name {
        case "session":
            if let previous = session {
                error("duplicate 'session' statement: first declared at \(previous.location?.lineColumn ?? "?")", at: statement.location)
            }
            checkKeys(statement, allowed: Vocabulary.sessionKeys, subject: "'session'")
            let preset = choice(statement, "preset", SessionPreset.self)
            let fallback = choice(statement, "fallback-preset", SessionPreset.self)
            if fallback != nil && statement.field("preset") == nil {
                error("fallback-preset is used when the inputs cannot serve preset=; give preset= too", at: statement.location(of: "fallback-preset"))
            }
            if let preset { presets.append(preset) }
            if session == nil { session = SessionSettings(preset: preset, fallbackPreset: fallback, location: statement.location) }
        case "input":
            if let input = readInput(statement, action: false, expectsFailure: false) {
                inputs.append(input)
                declared.inputs[input.name] = InputInfo(media: input.knownMedia, location: statement.location)
            }
        case "output":
            if let output = readOutput(statement, action: false, expectsFailure: false) {
                outputs.append(output)
                declared.outputs[output.name] = OutputInfo(kind: output.kind, location: statement.location)
            }
        case "overlay":
            if let overlay = readOverlay(statement, index: overlays.count + 1) {
                if let other = overlays.first(where: { $0.name == overlay.name && !Set($0.outputs).isDisjoint(with: overlay.outputs) }) {
                    error(
                        "an overlay named '\(overlay.name)' already draws on \(Set(other.outputs).intersection(overlay.outputs).sorted().joined(separator: ", ")) (declared at \(other.location?.lineColumn ?? "?")); give it another name=",
                        at: statement.location(of: "name"))
                } else {
                    overlays.append(overlay)
                }
            }
        default:
            break
        }
    }

    /// Claims a name for a new input or output: reports a duplicate, and where the first one is.
    mutating func claim(_ name: String, _ statement: Statement, in names: NameState) -> Bool {
        if let first = names.declaration(of: name) {
            error("duplicate name '\(name)': first declared at \(first.lineColumn); inputs and outputs need unique names", at: statement.location(of: "name"))
            return false
        }
        return true
    }

    mutating func readInput(_ statement: Statement, action: Bool, expectsFailure: Bool) -> InputDeclaration? {
        let subject = action ? "'add-input'" : "'input'"
        let errorsBefore = sink.count
        checkKeys(statement, allowed: Vocabulary.inputKeys + (action ? ["expect-error"] : []), subject: subject)
        let name = name(statement)
        if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "a unique name, like name=camera") }
        let media = choice(statement, "media", MediaType.self)
        var device = text(statement, "device") ?? (media == .audio ? "default-audio" : "default")
        if device == "default-video" { device = "default" }
        if device.hasPrefix("file:") {
            let path = String(device.dropFirst(5))
            if path.isEmpty {
                error("device file: needs a path, like device=file:clip.mp4", at: statement.location(of: "device"))
            } else if options.checksFileDevices {
                let resolved = path.hasPrefix("/") ? path : (baseDirectory as NSString).appendingPathComponent(path)
                var isDirectory: ObjCBool = false
                if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
                    error(
                        "the device '\(device)' does not exist (no media file at \(resolved)); run `capture devices` to list the devices of this machine, or name an existing file",
                        at: statement.location(of: "device"))
                }
            }
        }
        let probe = InputDeclaration(name: name ?? "", device: device)
        if let media, let deviceMedia = probe.knownMedia, media != deviceMedia {
            error(
                "the device '\(device)' captures \(deviceMedia.rawValue), not \(media.rawValue) (media=\(media.rawValue))", at: statement.location(of: "media"))
        }
        if statement.field("pattern") != nil && device != "test-pattern" {
            error("pattern applies only to device=test-pattern (this input's device is '\(device)')", at: statement.location(of: "pattern"))
        }
        let pattern = choice(statement, "pattern", Vocabulary.testPatterns)
        let size = size(statement, "size")
        let rate = frameRate(statement, "framerate")
        if size != nil { inputPriorityKeys.append(("size", statement.location(of: "size"))) }
        if rate != nil { inputPriorityKeys.append(("framerate", statement.location(of: "framerate"))) }
        let fallback = text(statement, "fallback")
        if let fallback {
            let other = InputDeclaration(name: "", device: fallback)
            if let deviceMedia = media ?? probe.knownMedia, let fallbackMedia = other.knownMedia, deviceMedia != fallbackMedia {
                error(
                    "the fallback '\(fallback)' captures \(fallbackMedia.rawValue), not \(deviceMedia.rawValue) like the device",
                    at: statement.location(of: "fallback"))
            }
            // A `--set NAME.device=` naming the fallback itself (`--set camera.device=test-pattern` on a file
            // that falls back to it) only makes the fallback moot: not an error of the file.
            if fallback == device, statement.field("device")?.valueLocation.file != "--set" {
                error("the fallback is the device itself; name another device", at: statement.location(of: "fallback"))
            }
        }
        let failAfter = integer(statement, "fail-after", 1...Int(Int32.max))
        if failAfter != nil, probe.isVirtualDevice == false {
            error(
                "fail-after is a fault injection of the virtual devices (test-pattern, test-tone, file:) only; '\(device)' is a real device",
                at: statement.location(of: "fail-after"))
        }
        if let name, device == "test-pattern" {
            testPatternInputs.append((name, size, rate, statement.location))
        }
        guard let name else { return nil }
        let valid = sink.count == errorsBefore
        let unique = expectsFailure || claim(name, statement, in: action ? state : declared)
        guard valid, unique else {
            // Keep the name known, so later statements naming it do not add errors of their own.
            registerFailed(input: name, media: probe.knownMedia, statement, action: action, expectsFailure: expectsFailure)
            return nil
        }
        let reconnect = boolean(statement, "reconnect")
        return InputDeclaration(
            name: name, device: device, media: media, pattern: pattern, size: size, frameRate: rate,
            failAfterFrames: failAfter, reconnect: reconnect, fallback: fallback, location: statement.location)
    }

    private mutating func registerFailed(input name: String, media: MediaType?, _ statement: Statement, action: Bool, expectsFailure: Bool) {
        if action {
            if state.declaration(of: name) == nil && !expectsFailure { state.inputs[name] = InputInfo(media: media, location: statement.location) }
        } else if declared.declaration(of: name) == nil {
            declared.inputs[name] = InputInfo(media: media, location: statement.location)
        }
    }

    private mutating func registerFailed(output name: String, kind: OutputKind?, _ statement: Statement, action: Bool, expectsFailure: Bool) {
        if action {
            if state.declaration(of: name) == nil && !expectsFailure { state.outputs[name] = OutputInfo(kind: kind, location: statement.location) }
        } else if declared.declaration(of: name) == nil {
            declared.outputs[name] = OutputInfo(kind: kind, location: statement.location)
        }
    }

    /// `overwrite=` of a photo or movie output: a plain location's file is replaced. With a `%d`
    /// pattern, which always takes a new number, it would mean nothing: an error.
    mutating func overwrite(_ statement: Statement, location: String?) -> Bool? {
        let overwrite = boolean(statement, "overwrite")
        if overwrite == true, let location, FileNaming.isPattern(location) {
            error(
                "overwrite=true replaces the file at a plain location; '\(location)' numbers a new file each time (%d), so nothing is ever replaced: leave overwrite out or give a plain name",
                at: statement.location(of: "overwrite"))
        }
        return overwrite
    }

    mutating func readOutput(_ statement: Statement, action: Bool, expectsFailure: Bool) -> OutputDeclaration? {
        let errorsBefore = sink.count
        let kind = choice(statement, "kind", OutputKind.self)
        let name = name(statement)
        let describedName = name.map { " '\($0)'" } ?? ""
        let subject = kind.map { "\($0.rawValue) output\(describedName)" } ?? "output\(describedName)"
        // Without a readable kind, any kind's key is let through (the kind's own error says what is wrong).
        var allowed =
            kind != nil || statement.field("kind") == nil
            ? Vocabulary.outputKeys(kind)
            : Vocabulary.outputKeys(nil) + OutputKind.allCases.flatMap { Vocabulary.outputKindKeys[$0] ?? [] }
        if action { allowed.append("expect-error") }
        checkKeys(statement, allowed: allowed, subject: subject) { key in
            let owners = Vocabulary.kinds(having: key)
            guard !owners.isEmpty else { return nil }
            return "it is a key of \(Suggest.list(owners.map { "\($0.rawValue) outputs" }))"
        }
        if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "a unique name, like name=preview") }
        if statement.field("kind") == nil {
            missing("kind", in: statement, subject: subject, hint: Suggest.list(OutputKind.allCases.map(\.rawValue)))
        }
        let input = statement.field("input") == nil ? nil : self.name(statement, "input")
        var rotation: Int?
        if let field = statement.field("rotation") {
            if let value = ValueSyntax.integer(field.value), [0, 90, 180, 270].contains(value) {
                rotation = value
            } else {
                error("rotation must be 0, 90, 180 or 270 (degrees clockwise), \(got(field, numberExpected: true))", at: field.keyLocation)
            }
        }
        let mirrored = boolean(statement, "mirrored"), rotatePixels = boolean(statement, "rotate-pixels")
        let settings = kind.flatMap { readSettings(statement, kind: $0) }
        if let name, let input {
            if action {
                if !expectsFailure { checkOutputInput(output: name, input: input, location: statement.location(of: "input")) }
            } else {
                outputInputs.append((name, input, statement.location(of: "input")))
            }
        }
        guard let name else { return nil }
        let valid = sink.count == errorsBefore
        let unique = expectsFailure || claim(name, statement, in: action ? state : declared)
        guard valid, unique, let settings else {
            registerFailed(output: name, kind: kind, statement, action: action, expectsFailure: expectsFailure)
            return nil
        }
        return OutputDeclaration(
            name: name, input: input, rotation: rotation, mirrored: mirrored, rotatePixels: rotatePixels, settings: settings, location: statement.location)
    }

    /// An added output's input must be in the session when it is added.
    mutating func checkOutputInput(output: String, input: String, location: SourceLocation) {
        if let info = state.inputs[input] {
            if info.media == .audio {
                error(
                    "output '\(output)' takes its frames from input '\(input)', which is an audio input (declared at \(info.location.lineColumn)); name a video input",
                    at: location)
            }
        } else if let removed = state.removed[input] {
            error("input '\(input)' was removed at \(removed.lineColumn); output '\(output)' cannot take its frames from it", at: location)
        } else {
            error(undeclared("input", input, in: state), at: location)
        }
    }

    mutating func readSettings(_ statement: Statement, kind: OutputKind) -> OutputSettings? {
        switch kind {
        case .photo:
            let codec = choice(statement, "codec", PhotoCodec.self)
            let quality = integer(statement, "quality", 1...100)
            let location = text(statement, "location")
            if let location {
                let pathExtension = ValueSyntax.pathExtension(location)
                let implied: PhotoCodec? = ["jpg", "jpeg"].contains(pathExtension) ? .jpeg : pathExtension == "png" ? .png : nil
                if implied == nil {
                    error("location '\(location)' must end in .jpg, .jpeg or .png", at: statement.location(of: "location"))
                } else if let codec, let implied, codec != implied {
                    error(
                        "location '\(location)' ends in .\(pathExtension) but codec is \(codec.rawValue); make them agree",
                        at: statement.location(of: "location"))
                }
            }
            if quality != nil, codec == .png {
                error("quality applies to JPEG photos only (codec is png)", at: statement.location(of: "quality"))
            }
            return .photo(
                PhotoOutputSettings(
                    codec: codec, quality: quality, location: location, size: size(statement, "size"),
                    zeroShutterLag: boolean(statement, "zero-shutter-lag"), crop: rect(statement, "crop"),
                    saveToLibrary: boolean(statement, "save-to-library"), overwrite: overwrite(statement, location: location)))
        case .movie:
            let location = text(statement, "location")
            let container = choice(statement, "container", MovieContainer.self)
            let videoCodec = choice(statement, "video-codec", MovieVideoCodec.self)
            let audioCodec = choice(statement, "audio-codec", MovieAudioCodec.self)
            let implied = location.flatMap { MovieContainer(pathExtension: ValueSyntax.pathExtension($0)) }
            if let location, let container, let implied, implied != container {
                error(
                    "location '\(location)' ends in .\(ValueSyntax.pathExtension(location)) but container is \(container.rawValue); make them agree",
                    at: statement.location(of: "location"))
            }
            // Capture's own table of what each container holds.
            let effective = container ?? implied ?? .mp4
            if let videoCodec, !effective.videoCodecs.contains(videoCodec) {
                error(
                    "a \(effective.rawValue) movie holds \(Suggest.list(effective.videoCodecs.map(\.rawValue))) video, not \(videoCodec.rawValue)",
                    at: statement.location(of: "video-codec"))
            }
            if let audioCodec, audioCodec != MovieAudioCodec.none, !effective.audioCodecs.contains(audioCodec) {
                error(
                    "a \(effective.rawValue) movie holds \(Suggest.list(effective.audioCodecs.map(\.rawValue))) audio, not \(audioCodec.rawValue)",
                    at: statement.location(of: "audio-codec"))
            }
            let bitrate = bitrate(statement, "bitrate")
            if let bitrate, bitrate < 1000 {
                error("bitrate must be at least 1000 bits per second, got \(statement.field("bitrate")?.text ?? "")", at: statement.location(of: "bitrate"))
            } else if bitrate != nil, (videoCodec ?? effective.defaultVideoCodec) == .mjpeg {
                error("bitrate does not apply to mjpeg video, which is quality-based; leave it out", at: statement.location(of: "bitrate"))
            }
            return .movie(
                MovieOutputSettings(
                    location: location, container: container, videoCodec: videoCodec, audioCodec: audioCodec,
                    bitrate: bitrate, maxDuration: duration(statement, "max-duration", positive: true),
                    maxFileSize: byteSize(statement, "max-file-size", positive: true),
                    minFreeDiskSpace: byteSize(statement, "min-free-disk-space", positive: false),
                    fragmentInterval: duration(statement, "fragment-interval"),
                    saveToLibrary: boolean(statement, "save-to-library"),
                    preRoll: duration(statement, "pre-roll"), encoder: encoder(statement), overwrite: overwrite(statement, location: location)))
        case .metadata:
            return .metadata(
                MetadataOutputSettings(
                    types: choices(statement, "types", BarcodeType.self), rectOfInterest: rect(statement, "rect-of-interest"),
                    backend: choice(statement, "backend", MetadataBackend.self),
                    highlight: statement.field("highlight") == nil ? nil : overlayOutputs(statement, key: "highlight"),
                    delivery: choice(statement, "delivery", MetadataDelivery.self),
                    discardLateFrames: boolean(statement, "discard-late-frames")))
        case .frames:
            let location = text(statement, "location")
            if let location {
                if !["png", "jpg", "jpeg"].contains(ValueSyntax.pathExtension(location)) {
                    error(
                        "location '\(location)' must end in .png, .jpg or .jpeg (the extension chooses the image format)",
                        at: statement.location(of: "location"))
                } else if !ValueSyntax.hasNumberPattern(location) {
                    error(
                        "location '\(location)' needs a %d-style pattern to number the files, like \"frames/%05d.png\"", at: statement.location(of: "location"))
                }
            }
            return .frames(
                FramesOutputSettings(
                    location: location, maxRate: number(statement, "max-rate", 0...1000, excludingLower: true, meaning: "frames per second"),
                    size: size(statement, "size")))
        case .preview:
            return .preview(
                PreviewOutputSettings(
                    sink: choice(statement, "sink", PreviewSink.self), window: windowHandle(statement, "window"),
                    gravity: choice(statement, "gravity", VideoGravity.self), size: size(statement, "size")))
        case .stream:
            let serve = text(statement, "serve")
            let publish = text(statement, "publish")
            switch (statement.field("serve"), statement.field("publish")) {
            case (nil, nil):
                error(
                    "a stream output needs serve=\"rtsp://ADDRESS:PORT/PATH\" (served by this process) or publish=\"rtsp://HOST:PORT/PATH\" / \"srt://HOST:PORT\" (sent to a server)",
                    at: statement.location)
            case (.some, .some):
                error(
                    "serve and publish exclude each other: a stream output is served or published; declare two outputs for both",
                    at: statement.location(of: "publish"))
            default:
                // Capture's own check of the URL: scheme, host, port, path, query.
                do throws(CaptureError) {
                    if let serve { _ = try StreamDestination.serving(serve) }
                    if let publish { _ = try StreamDestination.publishing(publish) }
                } catch let problem {
                    error(problem.description, at: statement.location(of: serve != nil ? "serve" : "publish"))
                }
            }
            let bitrate = bitrate(statement, "bitrate")
            if let bitrate, bitrate < 10_000 || bitrate > 100_000_000 {
                error(
                    "bitrate must be from 10000 to 100000000 bits per second, got \(statement.field("bitrate")?.text ?? "")",
                    at: statement.location(of: "bitrate"))
            }
            return .stream(
                StreamOutputSettings(
                    serve: serve, publish: publish, bitrate: bitrate,
                    audioCodec: choice(statement, "audio-codec", MovieAudioCodec.self), size: size(statement, "size"),
                    encoder: encoder(statement)))
        }
    }

    /// `encoder=`: `auto` or an H.264 encoder's factory name.
    mutating func encoder(_ statement: Statement) -> H264EncoderPreference? {
        guard let field = statement.field("encoder") else { return nil }
        let text = field.value.description
        if let preference = H264EncoderPreference(text) { return preference }
        error("encoder must be auto, \(H264Encoder.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'", at: statement.location(of: "encoder"))
        return nil
    }
}
