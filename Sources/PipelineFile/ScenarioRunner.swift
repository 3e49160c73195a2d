import Capture
import Foundation

/// How a run ended.
public enum RunEnding: String, Sendable, Hashable {
    /// The scenario ran to its end (or, for a file without actions, the duration limit passed).
    case completed
    /// `requestStop()` (SIGINT in the CLI), or the task running `run()` was cancelled.
    case stopRequested = "stop-requested"
    /// The duration limit passed before the scenario's end.
    case durationLimit = "duration-limit"
    /// An action failed without `expect-error=`: the scenario stopped there.
    case actionFailed = "action-failed"
    /// The declared session could not be set up (a device, an output kind not available yet ...).
    case setupFailed = "setup-failed"
    /// A file without actions: the session stopped by itself (interrupted, runtime error).
    case sessionEnded = "session-ended"
}

/// What a run did.
public struct ScenarioResult: Sendable {
    /// How the run ended.
    public var ending: RunEnding
    /// The process exit code the contract gives: 0 success, 1 an action failed or an expectation failed.
    public var exitCode: Int32
    /// The action that stopped the scenario, when one did.
    public var failure: ActionFailure?
    /// The `expect` statements that were met (empty when they were not checked).
    public var passedExpectations: [ExpectationOutcome]
    /// The `expect` statements that were not met, and the `expect-error=` actions that succeeded.
    public var failedExpectations: [ExpectationOutcome]
    /// Every event reported, in order.
    public var events: [RunnerEvent]

    /// True when the run exits 0.
    public var succeeded: Bool { exitCode == 0 }
}

/// Runs a `PipelineDocument`: builds the session, performs the scenario's actions in order, reports
/// every event, checks the expectations, and says how the run ended.
///
/// - Without actions (or with only `expect` statements), the session starts at once and runs until
///   the duration limit, a stop request, or until it stops by itself; the expectations are then checked.
/// - With actions, the session starts at `start`. An action that fails stops the scenario (reported
///   as `action-failed`), the session is stopped gracefully, and the run exits 1. `expect-error=`
///   makes the failure expected (the scenario goes on); success then is a failed expectation.
/// - `wait, event=` counts matching events since the run started (cumulative): `count=3` ends the
///   wait once three have been seen in all, including those seen before the wait began.
/// - On a running session, `add-*`, `remove-*` and `set-preset` outside a configuration block are
///   performed as a block of one statement, so the live pipeline is edited before the next statement.
/// - A stop request stops the session gracefully (recordings finalized) and ends the run with exit 0;
///   a scenario cut short that way does not check its `expect` statements.
/// - The duration limit stops the scenario where it is; the `expect` statements are then checked.
public final class ScenarioRunner: Sendable {
    /// How a run is bounded and where its files go.
    public struct Options: Sendable {
        /// Stop after this long (nil: when the scenario ends, or on a stop request).
        public var durationLimit: Duration?
        /// Where relative output locations go (nil: the `.pipeline` file's directory).
        public var outputDirectory: String?
        /// The session's name (the GStreamer pipeline's name).
        public var sessionName: String
        /// The timeout of `wait, event=` without `timeout=`.
        public var defaultWaitTimeout: Duration
        /// A file without actions: when its session stops (a `stop` through `interact`, an interruption)
        /// the run waits for it to start again (`start` through `interact`) instead of ending; only a stop
        /// request or the duration limit end it. What `capture serve` runs with.
        public var outlivesSession: Bool

        /// Options; by default no limit, outputs next to the `.pipeline` file, and a 10 s wait timeout.
        public init(
            durationLimit: Duration? = nil, outputDirectory: String? = nil, sessionName: String = "capture-session",
            defaultWaitTimeout: Duration = .seconds(10), outlivesSession: Bool = false
        ) {
            self.durationLimit = durationLimit
            self.outputDirectory = outputDirectory
            self.sessionName = sessionName
            self.defaultWaitTimeout = defaultWaitTimeout
            self.outlivesSession = outlivesSession
        }
    }

    /// What is run.
    public let document: PipelineDocument
    /// How it is run.
    public let options: Options
    /// The run's events, as they happen; the stream finishes when `run()` returns. One consumer.
    public let events: AsyncStream<RunnerEvent>

    private let continuation: AsyncStream<RunnerEvent>.Continuation
    private let log = EventLog()
    private let emitter = Locked<Emitter>(Emitter())
    private let control = Locked<Control>(Control())
    private let clockStart = Locked<ContinuousClock.Instant>(.now)

    private struct Emitter {
        var events: [RunnerEvent] = []
        var handler: (@Sendable (RunnerEvent) -> Void)?
    }

    private struct Control {
        var started = false
        var stopReason: RunEnding?
        var scenarioTask: Task<Void, Never>?
        var session: CaptureSession?
        var failure: ActionFailure?
        var unmetErrorExpectations: [ExpectationOutcome] = []
        /// The flash mode `toggle-flash` chose (nil: the camera's own, as `capture-photo` uses it).
        var flashMode: FlashMode?
        /// Overlay texts holding placeholders, by output and overlay name: the text as written and as
        /// last shown.
        var overlayTexts: [OverlayTextKey: (template: String, shown: String)] = [:]
        /// The last recording each movie output finished, by output name (`recording=`).
        var lastRecordings: [String: String] = [:]
    }

    private struct OverlayTextKey: Hashable {
        var output: String
        var name: String
    }

    /// Why a step did not succeed.
    private enum StepError: Error {
        case failed(name: String, message: String)
        /// The run is stopping (stop request or duration limit).
        case stopped
    }

    /// A runner for one run of a document.
    public init(document: PipelineDocument, options: Options = Options()) {
        self.document = document
        self.options = options
        (events, continuation) = AsyncStream.makeStream(of: RunnerEvent.self, bufferingPolicy: .unbounded)
    }

    /// The session being run (nil before it is set up).
    public var session: CaptureSession? { control.withLock { $0.session } }

    /// Stops the run gracefully: the current action is abandoned, the session is stopped (recordings
    /// finalized) and `run()` returns with exit code 0. Safe to call from any thread, any number of times.
    public func requestStop() { stop(.stopRequested) }

    private func stop(_ reason: RunEnding) {
        let task = control.withLock { control -> Task<Void, Never>? in
            if control.stopReason == nil { control.stopReason = reason }
            return control.scenarioTask
        }
        task?.cancel()
    }

    private var isStopping: Bool { control.withLock { $0.stopReason != nil } }

    // MARK: Running

    /// Runs the document once. `onEvent` is called for every event, in order, one at a time (it must
    /// not block); the same events go to `events`.
    public func run(onEvent: (@Sendable (RunnerEvent) -> Void)? = nil) async -> ScenarioResult {
        let first = control.withLock { control -> Bool in
            defer { control.started = true }
            return !control.started
        }
        precondition(first, "a ScenarioRunner runs once; make a new one to run again")
        emitter.withLock { $0.handler = onEvent }
        clockStart.withLock { $0 = .now }
        return await withTaskCancellationHandler {
            await runOnce()
        } onCancel: {
            self.requestStop()
        }
    }

    private func runOnce() async -> ScenarioResult {
        let builder = SessionBuilder(document: document, outputDirectory: options.outputDirectory)
        let limit = options.durationLimit.map { limit in
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { self?.stop(.durationLimit) }
            }
        }
        defer { limit?.cancel() }

        let session: CaptureSession
        do {
            let (built, notes) = try builder.makeSession(name: options.sessionName)
            session = built
            for note in notes { emit(.notice(note)) }
        } catch {
            let failure = ActionFailure(
                location: error.location, action: error.statement, errorName: error.error.name,
                message: error.error.description, expected: false)
            emit(.actionFailed(failure))
            control.withLock { $0.failure = failure }
            return finish(ending: .setupFailed, checkExpectations: false)
        }
        control.withLock { $0.session = session }
        for declaration in document.overlays {
            if let targets = try? builder.overlayTargets(declaration.outputs, overlay: declaration.name, in: session) {
                rememberText(declaration, on: targets, session: session)
            }
        }

        // Subscribe before anything can happen, so that no event is missed.
        let stream = session.events()
        let pump = Task { [log] in
            for await event in stream {
                if case .recordingFinished(let output, let result) = event.kind, result.success {
                    self.control.withLock { $0.lastRecordings[output] = result.location }
                }
                log.append(name: event.name, fields: event.fields)
                self.emit(.session(event), at: event.instant)
            }
        }

        let freeRunning = document.isFreeRunning
        let scenario = Task {
            if freeRunning {
                await self.runFreely(session)
            } else {
                _ = await self.perform(self.document.scenario, session: session, builder: builder)
            }
        }
        let alreadyStopping = control.withLock { control -> Bool in
            control.scenarioTask = scenario
            return control.stopReason != nil
        }
        if alreadyStopping { scenario.cancel() }
        await scenario.value

        // Stop gracefully, outside any cancelled task, then let the last events arrive.
        await Task { await session.stopRunning() }.value
        let started = log.count(EventMatcher(event: "session-started"))
        if started > 0 {
            _ = await Task { [log] in
                await log.wait(for: EventMatcher(event: "session-stopped"), count: started, timeout: .seconds(3))
            }.value
        }
        pump.cancel()
        await pump.value

        let (reason, failure) = control.withLock { ($0.stopReason, $0.failure) }
        let ending: RunEnding
        if failure != nil {
            ending = .actionFailed
        } else if let reason {
            ending = reason == .durationLimit && freeRunning ? .completed : reason
        } else {
            ending = freeRunning ? .sessionEnded : .completed
        }
        // A scripted scenario cut short by a stop request does not check its expectations.
        let check = !(ending == .stopRequested && !freeRunning)
        return finish(ending: ending, checkExpectations: check)
    }

    /// A file without actions: start at once, then run until stopped (or until the session stops by itself).
    private func runFreely(_ session: CaptureSession) async {
        guard !isStopping else { return }
        do {
            try await session.startRunning()
        } catch {
            fail(ActionFailure(location: nil, action: "start", errorName: error.name, message: error.description, expected: false))
            return
        }
        // A session whose input reconnects stops when the device goes and starts again when it comes
        // back: the run goes on until it stops for good (or is asked to stop).
        var stops = 1, resumes = 1
        while true {
            guard case .reached = await log.wait(for: EventMatcher(event: "session-stopped"), count: stops, timeout: nil), !isStopping else { return }
            if session.isAwaitingReconnection {
                guard case .reached = await log.wait(for: EventMatcher(event: "resumed"), count: resumes, timeout: nil) else { return }
                resumes += 1
            } else if options.outlivesSession {
                guard case .reached = await log.wait(for: EventMatcher(event: "session-started"), count: stops + 1, timeout: nil) else { return }
            } else {
                return
            }
            stops += 1
        }
    }

    private func finish(ending: RunEnding, checkExpectations: Bool) -> ScenarioResult {
        var passed: [ExpectationOutcome] = []
        var failed = control.withLock { $0.unmetErrorExpectations }
        if checkExpectations {
            for (expectation, location) in document.expectations {
                let seen = log.count(expectation.matcher)
                let ok = expectation.isSatisfied(bySeeing: seen)
                let statement = PipelineWriter.lines(of: ScenarioStep(.expect(expectation)), indent: "").joined()
                let message =
                    ok
                    ? "saw \(seen) \(expectation.matcher) event\(seen == 1 ? "" : "s")"
                    : "expected \(expectation), saw \(seen)"
                let outcome = ExpectationOutcome(location: location, statement: statement, passed: ok, seen: seen, message: message)
                emit(.expectation(outcome))
                if ok { passed.append(outcome) } else { failed.append(outcome) }
            }
        }
        let failure = control.withLock { $0.failure }
        var exitCode: Int32 = failure != nil || !failed.isEmpty ? 1 : 0
        if ending == .sessionEnded && document.expectations.isEmpty
            && log.count(EventMatcher(event: "runtime-error")) + log.count(EventMatcher(event: "interrupted")) > 0
        {
            // Nothing was expected of a session that died: that is a runtime failure.
            exitCode = 1
        }
        let events = emitter.withLock { $0.events }
        continuation.finish()
        return ScenarioResult(
            ending: ending, exitCode: exitCode, failure: failure, passedExpectations: passed,
            failedExpectations: failed, events: events)
    }

    // MARK: Events

    private func emit(_ kind: RunnerEvent.Kind, at instant: ContinuousClock.Instant = .now) {
        let start = clockStart.withLock { $0 }
        let event = RunnerEvent(kind, time: EventFormat.seconds(from: start, to: instant))
        emitter.withLock { emitter in
            emitter.events.append(event)
            emitter.handler?(event)
            continuation.yield(event)
        }
        switch kind {
        case .actionFailed(let failure):
            log.append(name: event.name, fields: [("action", .string(failure.action)), ("error", .string(failure.errorName))])
        case .videoTrimmed, .thumbnailGenerated:
            log.append(name: event.name, fields: event.fields)
        default:
            break
        }
    }

    private func fail(_ failure: ActionFailure) {
        emit(.actionFailed(failure))
        control.withLock { if $0.failure == nil { $0.failure = failure } }
    }

    // MARK: Actions

    /// Performs steps in order; false when the scenario must stop (failure or stop request).
    private func perform(_ steps: [ScenarioStep], session: CaptureSession, builder: SessionBuilder, inBlock: Bool = false) async -> Bool {
        for step in steps {
            guard !isStopping else { return false }
            switch step.action {
            case .expect:
                continue
            case .repeat(let count, let body):
                for _ in 0..<count {
                    guard await perform(body, session: session, builder: builder, inBlock: inBlock) else { return false }
                }
            case .configuration(let block):
                session.beginConfiguration()
                guard await perform(block.steps, session: session, builder: builder, inBlock: true) else { return false }
                let commit = ScenarioStep(step.action, expectedError: block.commitExpectedError, location: block.commitLocation)
                guard
                    await attempt(
                        commit, name: "commit-configuration",
                        { () async throws(StepError) in
                            try await self.capture { () async throws(CaptureError) in try await session.commitConfiguration() }
                        })
                else { return false }
                refreshOverlayTexts(session)
            default:
                guard
                    await attempt(
                        step, name: step.action.statementName,
                        { () async throws(StepError) in
                            try await self.execute(step.action, session: session, builder: builder, inBlock: inBlock)
                        })
                else { return false }
                if !inBlock { refreshOverlayTexts(session) }
            }
        }
        return true
    }

    /// Runs one action and applies the "when an action fails" rules. False when the scenario must stop.
    private func attempt(_ step: ScenarioStep, name: String, _ body: () async throws(StepError) -> Void) async -> Bool {
        do {
            try await body()
            if let expected = step.expectedError {
                let statement = PipelineWriter.lines(of: step, indent: "").first ?? name
                let wanted = expected == .any ? "to fail" : "to fail with \(expected)"
                let outcome = ExpectationOutcome(
                    location: step.location, statement: statement, passed: false, seen: nil,
                    message: "expected \(name) \(wanted), but it succeeded")
                control.withLock { $0.unmetErrorExpectations.append(outcome) }
                emit(.expectation(outcome))
            }
            return true
        } catch {
            switch error {
            case .stopped:
                return false
            case .failed(let errorName, let message):
                if let expected = step.expectedError, expected.accepts(errorName) {
                    emit(.actionFailed(ActionFailure(location: step.location, action: name, errorName: errorName, message: message, expected: true)))
                    return true
                }
                var text = message
                if case .named(let wanted)? = step.expectedError { text += " (expect-error wanted \(wanted))" }
                fail(ActionFailure(location: step.location, action: name, errorName: errorName, message: text, expected: false))
                return false
            }
        }
    }

    private func capture(_ body: () async throws(CaptureError) -> Void) async throws(StepError) {
        do { try await body() } catch { throw .failed(name: error.name, message: error.description) }
    }

    /// One action, through the public Capture API. Actions whose Capture API has not landed yet fail
    /// with `CaptureError.notAvailableYet` after checking what they name.
    private func execute(_ action: Action, session: CaptureSession, builder: SessionBuilder, inBlock: Bool) async throws(StepError) {
        switch action {
        case .start:
            try await capture { () async throws(CaptureError) in try await session.startRunning() }
        case .stop:
            await session.stopRunning()
        case .wait(.duration(let duration)):
            do { try await Task.sleep(for: duration) } catch { throw .stopped }
        case .wait(.event(let matcher, let count, let timeout)):
            let wanted = count ?? 1
            let limit = timeout ?? options.defaultWaitTimeout
            switch await log.wait(for: matcher, count: wanted, timeout: limit) {
            case .reached:
                return
            case .cancelled:
                throw .stopped
            case .timedOut(let seen):
                let error = RunnerError.waitTimedOut(matcher: matcher, wanted: wanted, seen: seen, timeout: limit)
                throw .failed(name: error.name, message: error.description)
            }
        case .capturePhoto(let request):
            try await capture { () async throws(CaptureError) in
                guard let photo = try output(request.output, in: session) as? CapturePhotoOutput else {
                    throw .invalidConfiguration(object: "output '\(request.output)'", reason: "capture-photo needs a photo output")
                }
                let defaults = photo.defaults
                for index in 0..<(request.count ?? 1) {
                    if index > 0, let interval = request.interval {
                        do { try await Task.sleep(for: interval) } catch { return }
                    }
                    // Without flash-mode=, the mode toggle-flash chose applies, else the device's
                    // (configure-device, flash-mode=).
                    let settings = PhotoSettings(
                        codec: defaults.codec, quality: defaults.quality, size: defaults.size,
                        flashMode: request.flashMode ?? control.withLock({ $0.flashMode })
                            ?? photoDevice(photo, in: session)?.flashMode ?? .off,
                        location: request.location.map(builder.resolvedOutputLocation), tags: request.tags)
                    _ = try await photo.capturePhoto(with: settings)
                }
            }
        case .startRecording(let name, _), .stopRecording(let name), .pauseRecording(let name), .resumeRecording(let name):
            try await capture { () async throws(CaptureError) in
                guard let movie = try self.output(name, in: session) as? CaptureMovieFileOutput else {
                    throw .invalidConfiguration(object: "output '\(name)'", reason: "\(action.statementName) needs a movie output")
                }
                switch action {
                case .startRecording(_, let location):
                    _ = try await movie.startRecording(to: location.map(builder.resolvedOutputLocation))
                case .stopRecording:
                    let result = try await movie.stopRecording()
                    if result.success { self.control.withLock { $0.lastRecordings[name] = result.location } }
                case .pauseRecording:
                    try movie.pauseRecording()
                default:
                    try movie.resumeRecording()
                }
            }
        case .configuration, .repeat, .expect:
            // Performed by `perform` (blocks and repeats hold steps; expectations are checked at the end).
            return
        case .addInput(let declaration):
            try await capture { () async throws(CaptureError) in
                let (input, note) = try builder.makeInput(declaration)
                if let note { emit(.notice(note)) }
                try await applyAlone(session, inBlock: inBlock, when: session.canAddInput(input)) { () throws(CaptureError) in
                    try session.addInput(input)
                }
            }
        case .addOutput(let declaration):
            try await capture { () async throws(CaptureError) in
                let output = try builder.makeOutput(declaration)
                try await applyAlone(session, inBlock: inBlock, when: session.canAddOutput(output)) { () throws(CaptureError) in
                    try session.addOutput(output)
                }
                if case .metadata(let keys) = declaration.settings, let highlight = keys.highlight, let metadata = output as? CaptureMetadataOutput {
                    metadata.highlightOutputs = try builder.overlayTargets(highlight, overlay: metadata.highlightOverlayName, in: session).map(\.name)
                }
            }
        case .removeInput(let name):
            try await capture { () async throws(CaptureError) in
                guard let input = session.input(named: name) else { throw .unknownInput(name: name) }
                try await applyAlone(session, inBlock: inBlock, when: true) { () throws(CaptureError) in try session.removeInput(input) }
            }
        case .removeOutput(let name):
            try await capture { () async throws(CaptureError) in
                let removed = try output(name, in: session)
                try await applyAlone(session, inBlock: inBlock, when: true) { () throws(CaptureError) in try session.removeOutput(removed) }
            }
        case .setPreset(let preset):
            try await capture { () async throws(CaptureError) in
                try await applyAlone(session, inBlock: inBlock, when: session.canSetSessionPreset(preset)) { () throws(CaptureError) in
                    try session.setSessionPreset(preset)
                }
            }
        case .configureDevice(let configuration):
            try await capture { () throws(CaptureError) in
                guard let input = session.input(named: configuration.input) else { throw .unknownInput(name: configuration.input) }
                let device = input.device
                // The lock is the session's for the statement: a lock another holder has is `device-locked`.
                try device.lockForConfiguration(holder: "session '\(session.name)' (configure-device, input=\(configuration.input))")
                defer { device.unlockForConfiguration() }
                _ = try configuration.apply(to: device)
            }
        case .addOverlay(let declaration):
            try await capture { () throws(CaptureError) in
                try builder.applyOverlay(declaration, to: session, placeholders: placeholders(session))
                rememberText(declaration, on: try builder.overlayTargets(declaration.outputs, overlay: declaration.name, in: session), session: session)
            }
        case .setOverlay(let declaration):
            try await capture { () throws(CaptureError) in
                let targets = try builder.overlayTargets(declaration.outputs, overlay: declaration.name, in: session)
                try builder.changeOverlay(declaration, in: session, placeholders: placeholders(session))
                if declaration.fields.text != nil || !declaration.fields.contentKeys.isEmpty {
                    forgetText(declaration.name, on: targets)
                    rememberText(declaration, on: targets, session: session)
                }
            }
        case .removeOverlay(let name, let outputs):
            try await capture { () throws(CaptureError) in
                let targets = try builder.overlayTargets(outputs, overlay: name, in: session)
                for output in targets where !output.overlays.contains(where: { $0.name == name }) { throw .unknownOverlay(name: name, output: output.name) }
                for output in targets { try output.removeOverlay(named: name) }
                forgetText(name, on: targets)
            }
        case .toggleFlash(let name):
            try await capture { () throws(CaptureError) in
                let photo: CapturePhotoOutput
                if let name {
                    guard let named = try output(name, in: session) as? CapturePhotoOutput else {
                        throw .invalidConfiguration(object: "output '\(name)'", reason: "toggle-flash needs a photo output")
                    }
                    photo = named
                } else {
                    guard let first = session.outputs.compactMap({ $0 as? CapturePhotoOutput }).first else {
                        throw .invalidConfiguration(object: "the session", reason: "toggle-flash needs a photo output")
                    }
                    photo = first
                }
                let current = placeholders(session).flashMode
                // A camera app's flash button: auto, on, off, then auto again; on only with a flash.
                let modes: [FlashMode] = photo.supportedFlashModes.contains(.on) ? [.auto, .on, .off] : [.auto, .off]
                let next = modes[((modes.firstIndex(of: current) ?? modes.count - 1) + 1) % modes.count]
                control.withLock { $0.flashMode = next }
                emit(.notice("flash mode: \(next.rawValue)"))
            }
        case .switchCamera(let position):
            try await capture { () async throws(CaptureError) in
                let input = try await session.switchCamera(to: position)
                emit(.notice("camera: \(input.device.localizedName) (\(input.device.uniqueID))"))
            }
        case .trimVideo(let request):
            try await capture { () async throws(CaptureError) in
                let source = try self.video(request.source, builder: builder)
                let result = try await VideoEditor.trim(
                    videoAt: source, from: request.from, to: request.to,
                    saveTo: builder.resolvedOutputLocation(request.location),
                    mode: request.exact == true ? .exact : .keyframe)
                let item = request.saveToLibrary == true ? try await MediaLibrary.user().save(videoAt: result.location) : nil
                emit(.videoTrimmed(result, libraryLocation: item?.path))
            }
        case .generateThumbnail(let request):
            try await capture { () async throws(CaptureError) in
                let source = try self.video(request.source, builder: builder)
                var generator = AssetImageGenerator(videoAt: source)
                generator.maximumSize = request.size
                let time: AssetImageGenerator.Time =
                    switch request.at {
                    case .seconds(let seconds): .seconds(seconds)
                    case .percent(let percent): .fraction(percent / 100)
                    }
                let image = try await generator.saveImage(at: time, to: builder.resolvedOutputLocation(request.location))
                emit(.thumbnailGenerated(source: source, image))
            }
        }
    }

    /// The file a `trim-video` or `generate-thumbnail` reads: `input=` from the output directory, or
    /// the last recording of the `recording=` movie output.
    private func video(_ source: MediaSource, builder: SessionBuilder) throws(CaptureError) -> String {
        switch source {
        case .file(let path):
            return builder.resolvedOutputLocation(path)
        case .recording(let output):
            guard let location = control.withLock({ $0.lastRecordings[output] }) else { throw .noRecordingYet(output: output) }
            return location
        }
    }

    // MARK: Overlay texts

    /// The state overlay texts show now.
    private func placeholders(_ session: CaptureSession) -> OverlayPlaceholders {
        OverlayPlaceholders(session: session, flashMode: control.withLock { $0.flashMode })
    }

    /// Keeps the text of an overlay that holds placeholders, to show the state as it changes.
    private func rememberText(_ declaration: OverlayDeclaration, on outputs: [CaptureOutput], session: CaptureSession) {
        guard let text = declaration.fields.text, OverlayPlaceholders.appear(in: text) else { return }
        let shown = placeholders(session).fill(text)
        control.withLock { control in
            for output in outputs { control.overlayTexts[OverlayTextKey(output: output.name, name: declaration.name)] = (text, shown) }
        }
    }

    private func forgetText(_ name: String, on outputs: [CaptureOutput]) {
        control.withLock { control in
            for output in outputs { control.overlayTexts[OverlayTextKey(output: output.name, name: name)] = nil }
        }
    }

    /// Shows the session's state in the overlay texts that hold placeholders (only those that change).
    private func refreshOverlayTexts(_ session: CaptureSession) {
        let texts = control.withLock { $0.overlayTexts }
        guard !texts.isEmpty else { return }
        let state = placeholders(session)
        for (key, text) in texts {
            let shown = state.fill(text.template)
            guard shown != text.shown, let output = session.output(named: key.output) else { continue }
            do {
                try output.updateOverlay(named: key.name) { overlay in
                    if case .text(_, let style) = overlay.content { overlay.content = .text(shown, style: style) }
                }
                control.withLock { $0.overlayTexts[key]?.shown = shown }
            } catch {
                // The overlay went away with its output: nothing left to show.
                control.withLock { $0.overlayTexts[key] = nil }
            }
        }
    }

    // MARK: Actions outside the scenario

    /// Performs one action now, beside the scenario (a key press in `capture run`): a failure is
    /// reported as an `action-failed` event (not expected) but does not stop the run. Configuration
    /// blocks, waits, repeats and expectations are not taken here. Returns the failure, nil on success.
    @discardableResult
    public func interact(_ action: Action) async -> ActionFailure? {
        guard let session, !isStopping else {
            return ActionFailure(location: nil, action: action.statementName, errorName: "not-running", message: "the run is not going on", expected: false)
        }
        switch action {
        case .configuration, .repeat, .expect, .wait:
            return ActionFailure(
                location: nil, action: action.statementName, errorName: "invalid-configuration",
                message: "\(action.statementName) is a scenario statement, not an interactive action", expected: false)
        default:
            break
        }
        // A camera switch is a configuration block of its own: not inside one the scenario has open.
        if case .switchCamera = action, session.isConfiguring {
            let failure = ActionFailure(
                location: nil, action: action.statementName, errorName: "invalid-configuration",
                message: "the scenario is inside a configuration block; try again once it is committed", expected: false)
            emit(.actionFailed(failure))
            return failure
        }
        let builder = SessionBuilder(document: document, outputDirectory: options.outputDirectory)
        do {
            try await execute(action, session: session, builder: builder, inBlock: false)
            refreshOverlayTexts(session)
            return nil
        } catch {
            let (name, message) =
                switch error {
                case .failed(let name, let message): (name, message)
                case .stopped: ("not-running", "the run is stopping")
                }
            let failure = ActionFailure(location: nil, action: action.statementName, errorName: name, message: message, expected: false)
            emit(.actionFailed(failure))
            return failure
        }
    }

    /// The session's state as overlay texts show it (nil before the session is set up).
    public var overlayState: OverlayPlaceholders? { session.map(placeholders) }

    /// A configuration change outside a configuration block. On a running session Capture applies such
    /// a change to the live pipeline in the background; the scenario needs it done before its next
    /// statement, so it is made a block of one (`beginConfiguration`, the change, `commitConfiguration`),
    /// which returns once the pipeline is edited. A change Capture would refuse (`valid` false) is
    /// called alone, so that it throws its own typed error and no empty block is committed.
    private func applyAlone(_ session: CaptureSession, inBlock: Bool, when valid: Bool, _ change: () throws(CaptureError) -> Void) async throws(CaptureError) {
        guard !inBlock, valid else {
            try change()
            return
        }
        try await session.applyChange(change)
    }

    /// The camera a photo output takes its frames from.
    private func photoDevice(_ photo: CapturePhotoOutput, in session: CaptureSession) -> CaptureDevice? {
        let inputs = session.inputs.filter { $0.mediaType == .video }
        return (photo.connection.input.flatMap { name in inputs.first { $0.name == name } } ?? inputs.first)?.device
    }

    private func output(_ name: String, in session: CaptureSession) throws(CaptureError) -> CaptureOutput {
        guard let output = session.output(named: name) else { throw .unknownOutput(name: name) }
        return output
    }
}
