import Capture
import CaptureControl

/// Builds a scenario's steps, folding `begin-configuration` ... `commit-configuration` into blocks.
struct SequenceBuilder {
    private var frames: [(begin: SourceLocation?, steps: [ScenarioStep])] = [(nil, [])]

    var isInBlock: Bool { frames.count > 1 }
    var blockStart: SourceLocation? { frames.last?.begin }
    var openBlocks: [SourceLocation] { frames.compactMap(\.begin) }

    mutating func append(_ step: ScenarioStep) {
        frames[frames.count - 1].steps.append(step)
    }

    mutating func begin(at location: SourceLocation) {
        frames.append((location, []))
    }

    /// Closes the innermost block; false when no block is open.
    mutating func commit(at location: SourceLocation, expectedError: ExpectedError?) -> Bool {
        guard frames.count > 1 else { return false }
        let block = frames.removeLast()
        append(
            ScenarioStep(
                .configuration(ConfigurationBlock(steps: block.steps, commitExpectedError: expectedError, commitLocation: location)),
                location: block.begin))
        return true
    }

    /// The steps; blocks left open are closed (their error is reported by the checker).
    mutating func close() -> [ScenarioStep] {
        // Every frame above the first was opened by a begin-configuration, which sets `begin`.
        while frames.count > 1 { _ = commit(at: frames[frames.count - 1].begin!, expectedError: nil) }
        return frames[0].steps
    }
}

extension Checker {
    /// Statements a configuration block may hold: they are applied together at commit.
    static let configurationStatements: Set<String> = [
        "add-input", "add-output", "remove-input", "remove-output", "set-preset", "begin-configuration", "commit-configuration",
    ]

    /// How deep `repeat` statements may nest.
    static let maxRepeatDepth = 4

    /// Reads one action into the sequence.
    mutating func act(_ statement: Statement, into sequence: inout SequenceBuilder, repeatDepth: Int) {
        if sequence.isInBlock, !Self.configurationStatements.contains(statement.name), let start = sequence.blockStart {
            error(
                "'\(statement.name)' cannot be inside a configuration block (begun at \(start.lineColumn)): only add-input, add-output, remove-input, remove-output and set-preset are applied at commit-configuration; commit the block first",
                at: statement.location)
        }
        switch statement.name {
        case "begin-configuration":
            checkKeys(statement, allowed: ["expect-error"], subject: "'begin-configuration'")
            _ = expectedError(statement, canFail: false)
            sequence.begin(at: statement.location)
            blockStates.append(state)
        case "commit-configuration":
            checkKeys(statement, allowed: ["expect-error"], subject: "'commit-configuration'")
            let expected = expectedError(statement, canFail: true)
            if !sequence.commit(at: statement.location, expectedError: expected) {
                error("commit-configuration without a matching begin-configuration", at: statement.location)
            } else if let before = blockStates.popLast(), expected != nil {
                // A block expected to fail is dropped whole: after it the session is as it was before it.
                state = before
            }
        default:
            if let step = readAction(statement, repeatDepth: repeatDepth) { sequence.append(step) }
        }
    }

    /// Reads an action other than the block delimiters. Nil when it has errors.
    mutating func readAction(_ statement: Statement, repeatDepth: Int) -> ScenarioStep? {
        let name = statement.name
        let subject = "'\(name)'"
        func step(_ action: Action, _ expected: ExpectedError?) -> ScenarioStep {
            ScenarioStep(action, expectedError: expected, location: statement.location)
        }
        let errorsBefore = sink.count
        switch name {
        case "add-input":
            let expected = expectedError(statement, canFail: true)
            if let field = statement.field("name"), everyName[field.value.description] == nil { everyName[field.value.description] = statement.location }
            guard let input = readInput(statement, action: true, expectsFailure: expected != nil) else { return nil }
            if expected == nil {
                state.inputs[input.name] = InputInfo(media: input.knownMedia, location: statement.location)
                state.removed[input.name] = nil
            }
            return step(.addInput(input), expected)
        case "add-output":
            let expected = expectedError(statement, canFail: true)
            if let field = statement.field("name"), everyName[field.value.description] == nil { everyName[field.value.description] = statement.location }
            guard let output = readOutput(statement, action: true, expectsFailure: expected != nil) else { return nil }
            if expected == nil {
                state.outputs[output.name] = OutputInfo(kind: output.kind, location: statement.location)
                state.removed[output.name] = nil
            }
            return step(.addOutput(output), expected)
        default:
            break
        }
        checkKeys(statement, allowed: (Vocabulary.actionKeys[name] ?? []) + ["expect-error"], subject: subject)
        let action: Action?
        var expected: ExpectedError?
        switch name {
        case "start":
            expected = expectedError(statement, canFail: true)
            action = .start
        case "stop":
            expected = expectedError(statement, canFail: false)
            action = .stop
        case "wait":
            (action, expected) = readWait(statement)
        case "capture-photo":
            expected = expectedError(statement, canFail: true)
            let output = requiredOutput(statement, kind: .photo, expectsFailure: expected != nil, hint: "the photo output to use, like output=photo")
            let count = integer(statement, "count", 1...10_000)
            let interval = duration(statement, "interval")
            if statement.field("interval") != nil, (count ?? 1) <= 1 {
                error("interval is the time between photos: it applies when count is above 1", at: statement.location(of: "interval"))
            }
            let request = output.map {
                PhotoCaptureRequest(
                    output: $0, location: text(statement, "location"), count: count, interval: interval,
                    flashMode: choice(statement, "flash-mode", FlashMode.self),
                    tags: PhotoTags(
                        latitude: number(statement, "latitude", -90...90),
                        longitude: number(statement, "longitude", -180...180),
                        altitude: number(statement, "altitude", -100_000...100_000),
                        comment: text(statement, "comment"), description: text(statement, "description")))
            }
            action = request.map(Action.capturePhoto)
        case "start-recording", "stop-recording", "pause-recording", "resume-recording":
            expected = expectedError(statement, canFail: true)
            let output = requiredOutput(statement, kind: .movie, expectsFailure: expected != nil, hint: "the movie output, like output=movie")
            let location = text(statement, "location")
            if let location, let output, let declaredKind = state.outputs[output]?.kind, declaredKind == .movie,
                MovieContainer(pathExtension: ValueSyntax.pathExtension(location)) == nil
            {
                error("location '\(location)' must end in .mp4, .m4v, .mkv, .webm, .mov or .qt", at: statement.location(of: "location"))
            }
            switch (name, output) {
            case ("start-recording", let output?): action = .startRecording(output: output, location: location)
            case ("stop-recording", let output?): action = .stopRecording(output: output)
            case ("pause-recording", let output?): action = .pauseRecording(output: output)
            case ("resume-recording", let output?): action = .resumeRecording(output: output)
            default: action = nil
            }
        case "trim-video":
            expected = expectedError(statement, canFail: true)
            action = readTrim(statement, expectsFailure: expected != nil)
        case "generate-thumbnail":
            expected = expectedError(statement, canFail: true)
            action = readThumbnail(statement, expectsFailure: expected != nil)
        case "pick-from-library":
            expected = expectedError(statement, canFail: true)
            action = readPick(statement, expectsFailure: expected != nil)
        case "remove-input", "remove-output":
            expected = expectedError(statement, canFail: true)
            let kind = name == "remove-input" ? "input" : "output"
            let target = self.name(statement)
            if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "the \(kind) to remove") }
            if let target, expected == nil {
                let present = kind == "input" ? state.inputs[target] != nil : state.outputs[target] != nil
                if !present {
                    if let removed = state.removed[target] {
                        error("\(kind) '\(target)' was already removed at \(removed.lineColumn)", at: statement.location(of: "name"))
                    } else {
                        error(undeclared(kind, target, in: state), at: statement.location(of: "name"))
                    }
                } else {
                    if kind == "input" { state.inputs[target] = nil } else { state.outputs[target] = nil }
                    state.removed[target] = statement.location
                }
            }
            action = target.map { kind == "input" ? Action.removeInput(name: $0) : Action.removeOutput(name: $0) }
        case "set-preset":
            expected = expectedError(statement, canFail: true)
            if statement.field("preset") == nil {
                missing("preset", in: statement, subject: subject, hint: SessionPreset.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let preset = choice(statement, "preset", SessionPreset.self)
            if let preset { presets.append(preset) }
            action = preset.map(Action.setPreset)
        case "configure-device":
            expected = expectedError(statement, canFail: true)
            action = readDeviceConfiguration(statement, expectsFailure: expected != nil).map(Action.configureDevice)
        case "add-overlay":
            expected = expectedError(statement, canFail: true)
            action = readOverlay(statement, index: nil).map(Action.addOverlay)
        case "set-overlay":
            expected = expectedError(statement, canFail: true)
            action = readOverlayChange(statement).map(Action.setOverlay)
        case "remove-overlay":
            expected = expectedError(statement, canFail: true)
            if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "the overlay to remove") }
            let target = self.name(statement)
            let outputs = statement.field("output") == nil ? [] : overlayOutputs(statement)
            action = target.flatMap { target in outputs.map { Action.removeOverlay(name: target, outputs: $0) } }
        case "toggle-flash":
            expected = expectedError(statement, canFail: true)
            let output =
                statement.field("output") == nil
                ? nil
                : requiredOutput(statement, kind: .photo, expectsFailure: expected != nil, hint: "the photo output whose flash mode to change")
            action = .toggleFlash(output: output)
        case "switch-camera":
            expected = expectedError(statement, canFail: true)
            let position = choice(statement, "position", ["front", "back", "external"]).flatMap(DevicePosition.init(rawValue:))
            action = .switchCamera(position: position)
        case "expect":
            _ = expectedError(statement, canFail: false)
            if repeatDepth > 0 {
                error("expect cannot be repeated: write it once, after the repeat, with the total count", at: statement.location)
            }
            action = readExpectation(statement).map(Action.expect)
        case "repeat":
            _ = expectedError(statement, canFail: false)
            action = readRepeat(statement, repeatDepth: repeatDepth)
        default:
            action = nil
        }
        guard let action, sink.count == errorsBefore else { return nil }
        return step(action, expected)
    }

    /// The `output=` (or another key) of an action that needs an output of one kind, in the session at this point.
    mutating func requiredOutput(_ statement: Statement, kind: OutputKind, expectsFailure: Bool, hint: String, key: String = "output") -> String? {
        guard statement.field(key) != nil else {
            missing(key, in: statement, subject: "'\(statement.name)'", hint: hint)
            return nil
        }
        guard let output = name(statement, key) else { return nil }
        guard !expectsFailure else { return output }
        let location = statement.location(of: key)
        if let info = state.outputs[output] {
            if let actual = info.kind, actual != kind {
                error(
                    "\(statement.name) needs a \(kind.rawValue) output; '\(output)' is a \(actual.rawValue) output (declared at \(info.location.lineColumn))",
                    at: location)
            }
        } else if let removed = state.removed[output] {
            error("output '\(output)' was removed at \(removed.lineColumn); add it again before \(statement.name)", at: location)
        } else {
            error(undeclared("output", output, in: state), at: location)
        }
        return output
    }

    /// `input=FILE`, `recording=MOVIE-OUTPUT` or `picked=NAME` (exactly one) of `trim-video` and `generate-thumbnail`.
    mutating func mediaSource(_ statement: Statement, expectsFailure: Bool) -> MediaSource? {
        let given = ["input", "recording", "picked"].filter { statement.field($0) != nil }
        guard given.count == 1 else {
            if given.isEmpty {
                missing(
                    "input", in: statement, subject: "'\(statement.name)'",
                    hint:
                        "the video file, like input=clip.mp4, recording=movie for the last recording of a movie output, or picked=NAME for a video pick-from-library picked"
                )
            } else {
                error(
                    "\(statement.name) reads one video: give one of input=, recording= and picked=, not \(given.joined(separator: "= and "))=",
                    at: statement.location(of: given[1]))
            }
            return nil
        }
        switch given[0] {
        case "input":
            return text(statement, "input").map(MediaSource.file)
        case "recording":
            return requiredOutput(statement, kind: .movie, expectsFailure: expectsFailure, hint: "", key: "recording")
                .map { MediaSource.recording(output: $0) }
        default:
            guard let name = name(statement, "picked") else { return nil }
            if !expectsFailure {
                if let pick = picks[name] {
                    if pick.kind == .photo {
                        error(
                            "\(statement.name) reads a video; '\(name)' is the photo picked at \(pick.location.lineColumn) (pick it with kind=video)",
                            at: statement.location(of: "picked"))
                    }
                } else {
                    let known = picks.keys.sorted()
                    error(
                        "nothing is picked as '\(name)' before this line\(Suggest.didYouMean(name, known)); pick it first: pick-from-library, name=\(name), kind=video",
                        at: statement.location(of: "picked"))
                }
            }
            return .picked(name)
        }
    }

    /// `pick-from-library`: `name=` (what later statements call the pick), `kind=`, `file=`.
    mutating func readPick(_ statement: Statement, expectsFailure: Bool) -> Action? {
        if statement.field("name") == nil {
            missing("name", in: statement, subject: "'pick-from-library'", hint: "what later statements call the pick, like name=clip (then picked=clip)")
        }
        let name = name(statement)
        let kind = choice(statement, "kind", MediaLibrary.MediaKind.self)
        let file = text(statement, "file")
        var known = kind
        if let file {
            let byName = MediaScan.kind(ofFile: file)
            if file.contains("/") {
                error("file is the item's name in the album, like file=\"IMG_0001.jpg\", not a path", at: statement.location(of: "file"))
            } else if byName == nil {
                error("file '\(file)' is not a photo (.jpg, .jpeg, .png) or a video (.mp4, .m4v, .mov, .mkv, .webm)", at: statement.location(of: "file"))
            } else if let kind, kind != byName {
                error("file '\(file)' is a \(byName?.rawValue ?? "") but kind is \(kind.rawValue); make them agree", at: statement.location(of: "file"))
            }
            known = known ?? byName
        }
        guard let name else { return nil }
        if !expectsFailure { picks[name] = (known, statement.location) }
        return .pickFromLibrary(LibraryPick(name: name, kind: kind, file: file))
    }

    /// `trim-video`.
    mutating func readTrim(_ statement: Statement, expectsFailure: Bool) -> Action? {
        let source = mediaSource(statement, expectsFailure: expectsFailure)
        let from = duration(statement, "from").map(ValueSyntax.seconds), to = duration(statement, "to").map(ValueSyntax.seconds)
        for key in ["from", "to", "location"] where statement.field(key) == nil {
            missing(
                key, in: statement, subject: "'trim-video'",
                hint: key == "location" ? "where the trimmed copy goes, like location=trimmed.mp4" : "a time in seconds")
        }
        if let from, let to, from >= to {
            error("from (\(format(from)) s) must come before to (\(format(to)) s)", at: statement.location(of: "to"))
        }
        let location = text(statement, "location")
        if let location, MovieContainer(pathExtension: ValueSyntax.pathExtension(location)) == nil {
            error("location '\(location)' must end in .mp4, .m4v, .mkv, .webm or .mov (it chooses the container)", at: statement.location(of: "location"))
        }
        let exact = boolean(statement, "exact"), fast = boolean(statement, "fast"), save = boolean(statement, "save-to-library")
        if let exact, let fast, exact == fast {
            error(
                "fast=\(fast) and exact=\(exact) contradict each other: a trim is frame-exact unless fast=true (give one of them)",
                at: statement.location(of: "fast"))
        }
        guard let source, let from, let to, let location, from < to else { return nil }
        return .trimVideo(TrimRequest(source: source, from: from, to: to, location: location, exact: exact, fast: fast, saveToLibrary: save))
    }

    /// `generate-thumbnail`.
    mutating func readThumbnail(_ statement: Statement, expectsFailure: Bool) -> Action? {
        let source = mediaSource(statement, expectsFailure: expectsFailure)
        let at: ThumbnailTime? = parsed(statement, "at", mustBe: "a time in seconds (2.5, \"500ms\") or a share of the duration (\"50%\")") { value in
            if case .string(let text) = value, text.hasSuffix("%") {
                guard let percent = Double(text.dropLast()), percent.isFinite, (0...100).contains(percent) else { return nil }
                return .percent(percent)
            }
            return ValueSyntax.duration(value).map { .seconds(ValueSyntax.seconds($0)) }
        }
        for key in ["at", "location"] where statement.field(key) == nil {
            missing(
                key, in: statement, subject: "'generate-thumbnail'",
                hint: key == "at" ? "when, like at=\"50%\" or at=2.5" : "where the image goes, like location=thumbnail.jpg")
        }
        let location = text(statement, "location")
        if let location, !["jpg", "jpeg", "png"].contains(ValueSyntax.pathExtension(location).lowercased()) {
            error("location '\(location)' must end in .jpg, .jpeg or .png", at: statement.location(of: "location"))
        }
        let size = size(statement, "size")
        guard let source, let at, let location, ["jpg", "jpeg", "png"].contains(ValueSyntax.pathExtension(location).lowercased()) else { return nil }
        return .generateThumbnail(ThumbnailRequest(source: source, at: at, location: location, size: size))
    }

    mutating func readWait(_ statement: Statement) -> (Action?, ExpectedError?) {
        let hasDuration = statement.field("duration") != nil
        let hasEvent = statement.field("event") != nil
        if hasDuration && hasEvent {
            error("wait takes duration= or event=, not both", at: statement.location(of: "event"))
            return (nil, nil)
        }
        if !hasDuration && !hasEvent {
            error("wait needs duration= (like duration=2 or duration=\"500ms\") or event= (like event=session-started)", at: statement.location)
            return (nil, nil)
        }
        if hasDuration {
            for key in ["output", "type", "value", "swapped", "count", "timeout"] where statement.field(key) != nil {
                error("\(key) applies only to a wait with event=; this wait has duration=", at: statement.location(of: key))
            }
            let expected = expectedError(statement, canFail: false)
            return (duration(statement, "duration").map { Action.wait(.duration($0)) }, expected)
        }
        let expected = expectedError(statement, canFail: true)
        guard let matcher = readMatcher(statement) else { return (nil, expected) }
        let count = integer(statement, "count", 1...1_000_000)
        let timeout = duration(statement, "timeout", positive: true)
        return (.wait(.event(matcher, count: count, timeout: timeout)), expected)
    }

    mutating func readMatcher(_ statement: Statement) -> EventMatcher? {
        let event = choice(statement, "event", Vocabulary.events)
        let output = statement.field("output") == nil ? nil : name(statement, "output")
        if let output { outputMentions.append((output, statement.location(of: "output"), statement.name)) }
        let type = text(statement, "type")
        let value = text(statement, "value", allowEmpty: true)
        let swapped = text(statement, "swapped")
        if swapped != nil, let event, event != "configuration-committed" {
            error("swapped= matches the 'swapped' field of configuration-committed, not of \(event)", at: statement.location(of: "swapped"))
        }
        return event.map { EventMatcher(event: $0, output: output, type: type, value: value, swapped: swapped) }
    }

    mutating func readExpectation(_ statement: Statement) -> Expectation? {
        if statement.field("event") == nil {
            missing("event", in: statement, subject: "'expect'", hint: "the event to count, like event=session-started")
        }
        let matcher = readMatcher(statement)
        let count = integer(statement, "count", 0...1_000_000)
        let atLeast = integer(statement, "at-least", 1...1_000_000)
        switch (statement.field("count"), statement.field("at-least")) {
        case (nil, nil):
            error("expect needs count= (exactly that many events) or at-least= (that many or more)", at: statement.location)
            return nil
        case (.some, .some):
            error("expect takes count= or at-least=, not both", at: statement.location(of: "at-least"))
            return nil
        default:
            break
        }
        guard let matcher else { return nil }
        if let count { return Expectation(matcher, .exactly(count)) }
        return atLeast.map { Expectation(matcher, .atLeast($0)) }
    }

    mutating func readDeviceConfiguration(_ statement: Statement, expectsFailure: Bool) -> DeviceConfiguration? {
        guard statement.field("input") != nil else {
            missing("input", in: statement, subject: "'configure-device'", hint: "the camera input, like input=camera")
            return nil
        }
        let input = name(statement, "input")
        if let input, !expectsFailure {
            if let info = state.inputs[input] {
                if info.media == .audio {
                    error(
                        "configure-device sets camera controls; '\(input)' is an audio input (declared at \(info.location.lineColumn))",
                        at: statement.location(of: "input"))
                }
            } else {
                error(undeclared("input", input, in: state), at: statement.location(of: "input"))
            }
        }
        if !Vocabulary.deviceSettingKeys.contains(where: { statement.field($0) != nil }) {
            error("configure-device needs at least one setting: \(Vocabulary.deviceSettingKeys.joined(separator: ", "))", at: statement.location)
        }
        guard let input else { return nil }
        let configuration = DeviceConfiguration(
            input: input,
            focusMode: choice(statement, "focus-mode", FocusMode.self),
            focusPoint: point(statement, "focus-point"),
            exposureMode: choice(statement, "exposure-mode", ExposureMode.self),
            exposurePoint: point(statement, "exposure-point"),
            exposureBias: number(statement, "exposure-bias", -8...8, meaning: "EV"),
            whiteBalanceMode: choice(statement, "white-balance-mode", WhiteBalanceMode.self),
            torchMode: choice(statement, "torch-mode", TorchMode.self),
            torchLevel: number(statement, "torch-level", 0...1, excludingLower: true),
            flashMode: choice(statement, "flash-mode", FlashMode.self),
            zoom: number(statement, "zoom", 1...Double.greatestFiniteMagnitude, meaning: "1 is no zoom"),
            lowLightBoost: boolean(statement, "low-light-boost"),
            lensPosition: number(statement, "lens-position", 0...1, meaning: "0 nearest, 1 furthest"),
            exposureDuration: duration(statement, "exposure-duration", positive: true),
            gain: integer(statement, "gain", -1_000_000...1_000_000_000),
            whiteBalanceTemperature: integer(statement, "white-balance-temperature", 1000...40_000),
            controls: controlAssignments(statement))
        // Settings that imply a mode must not contradict the mode written beside them.
        func conflict(_ key: String, needs mode: String, _ modeKey: String, _ written: String?) {
            if statement.field(key) != nil, let written, written != mode {
                error("\(key) sets \(modeKey)=\(mode); it cannot go with \(modeKey)=\(written)", at: statement.location(of: key))
            }
        }
        conflict("lens-position", needs: "locked", "focus-mode", configuration.focusMode?.rawValue)
        conflict("exposure-duration", needs: "custom", "exposure-mode", configuration.exposureMode?.rawValue)
        conflict("gain", needs: "custom", "exposure-mode", configuration.exposureMode?.rawValue)
        conflict("white-balance-temperature", needs: "locked", "white-balance-mode", configuration.whiteBalanceMode?.rawValue)
        conflict("torch-level", needs: "on", "torch-mode", configuration.torchMode?.rawValue)
        return configuration
    }

    /// `controls=`: a list of `"KEY=VALUE"` strings (or one), each a control's key and value.
    mutating func controlAssignments(_ statement: Statement) -> [ControlAssignment] {
        guard let field = statement.field("controls") else { return [] }
        let items: [(word: String?, text: String, location: SourceLocation)]
        switch field.value {
        case .list, .array:
            items = Self.listItems(field)
        case .string(let text):
            items = [(text, field.text, field.valueLocation)]
        default:
            items = [(nil, field.text, field.valueLocation)]
        }
        if items.isEmpty { error("controls must list at least one \"KEY=VALUE\", like controls={ \"brightness=200\" }", at: field.keyLocation) }
        var assignments: [ControlAssignment] = []
        for item in items {
            guard let text = item.word, let assignment = ControlAssignment(parsing: text) else {
                error(
                    "each item of controls must be \"KEY=VALUE\" in double quotes, with a control key like brightness or white_balance_temperature (capture controls -i INPUT lists them); got \(item.text)",
                    at: item.location)
                continue
            }
            assignments.append(assignment)
        }
        return assignments
    }

    // MARK: repeat

    mutating func readRepeat(_ statement: Statement, repeatDepth: Int) -> Action? {
        if statement.field("count") == nil { missing("count", in: statement, subject: "'repeat'", hint: "how many times, like count=3") }
        let count = integer(statement, "count", 1...1_000_000)
        guard let field = statement.field("actions") else {
            missing(
                "actions", in: statement, subject: "'repeat'",
                hint: "the statements to repeat, like actions={ \"capture-photo, output=photo\", \"wait, duration=1\" }")
            return nil
        }
        guard repeatDepth < Self.maxRepeatDepth else {
            error("repeat statements nest more than \(Self.maxRepeatDepth) deep", at: field.keyLocation)
            return nil
        }
        // The repeated statements, each located where it is written inside the repeat line.
        var logicals: [LogicalStatement] = []
        switch field.value {
        case .list, .array:
            guard !field.items.isEmpty else {
                error("actions must hold at least one statement, like actions={ \"wait, duration=1\" }", at: field.keyLocation)
                return nil
            }
            for item in field.items {
                guard case .string(let text) = item.value else {
                    error("each item of actions must be a statement in double quotes, like \"wait, duration=1\"; got \(item.text)", at: item.location)
                    continue
                }
                logicals.append(item.nested.flatMap { $0.text == text ? $0 : nil } ?? Self.logical(text, at: item.location))
            }
        case .string(let text):
            logicals.append(field.nested.flatMap { $0.text == text ? $0 : nil } ?? Self.logical(text, at: field.valueLocation))
        default:
            error(
                "actions must be a list of statements in double quotes, like actions={ \"capture-photo, output=photo\", \"wait, duration=1\" }; got \(field.text)",
                at: field.keyLocation)
            return nil
        }
        var statements: [Statement] = []
        for logical in logicals {
            guard let nested = read(logical) else { continue }
            if Vocabulary.declarations.contains(nested.name) {
                error("'\(nested.name)' is a declaration and cannot be repeated; declarations come before the scenario", at: nested.location)
                continue
            }
            statements.append(nested)
        }
        var body = SequenceBuilder()
        for nested in statements { act(nested, into: &body, repeatDepth: repeatDepth + 1) }
        let steps = finish(body)
        if (count ?? 1) >= 2 {
            // The second pass sees the session as the first pass left it: an output added and never
            // removed, for one, is a duplicate there.
            let saved = sink
            sink = saved.emptyCopy()
            var again = SequenceBuilder()
            for nested in statements { act(nested, into: &again, repeatDepth: repeatDepth + 1) }
            blockStates.removeLast(again.openBlocks.count)
            _ = again.close()
            let second = sink.diagnostics
            sink = saved
            for diagnostic in second where !saved.contains(diagnostic) {
                error(diagnostic.message + " (on the second time through the repeat at \(statement.location.lineColumn))", at: diagnostic.location)
            }
        }
        guard let count else { return nil }
        return .repeat(count: count, steps: steps)
    }

    /// A statement text whose characters are located one after the other from a place (items that
    /// were not quoted).
    static func logical(_ text: String, at location: SourceLocation) -> LogicalStatement {
        let bytes = Array(text.utf8)
        let columns = SourceSplitter.scalarColumns(bytes)
        let positions = columns.map { SourceLocation(file: location.file, line: location.line, column: location.column + $0 - 1) }
        return LogicalStatement(
            bytes: bytes, positions: positions,
            endPosition: SourceLocation(file: location.file, line: location.line, column: location.column + (columns.last ?? 0)))
    }
}
