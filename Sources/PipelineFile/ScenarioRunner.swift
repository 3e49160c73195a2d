import Capture
import CaptureControl
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
/// - A configuration block is all or nothing: a statement of it that fails drops the whole block
///   (`CaptureSession.cancelConfiguration()`, the session as it was), and the failure is the commit's:
///   expected when `commit-configuration`'s `expect-error=` accepts it, else it stops the scenario.
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
        /// Where relative output locations go (nil: the current directory; never the `.pipeline` file's).
        public var outputDirectory: String?
        /// The session's name (the GStreamer pipeline's name).
        public var sessionName: String
        /// The timeout of `wait, event=` without `timeout=`.
        public var defaultWaitTimeout: Duration
        /// A file without actions: when its session stops (a `stop` through `interact`, an interruption)
        /// the run waits for it to start again (`start` through `interact`) instead of ending; only a stop
        /// request or the duration limit end it. What `capture serve` runs with.
        public var outlivesSession: Bool
        /// What commands from remote callers (`capture serve`'s API, MQTT) may name besides the output
        /// folder (`RemoteAccess`).
        public var remoteAccess: RemoteAccess
        /// What the controller's video mode adds (`ControlCommand.switchMode`).
        public var videoMode: SessionController.VideoMode

        /// Options; by default no limit, outputs in the current directory, and a 10 s wait timeout.
        public init(
            durationLimit: Duration? = nil, outputDirectory: String? = nil, sessionName: String = "capture-session",
            defaultWaitTimeout: Duration = .seconds(10), outlivesSession: Bool = false,
            remoteAccess: RemoteAccess = .outputFolderOnly, videoMode: SessionController.VideoMode = SessionController.VideoMode()
        ) {
            self.durationLimit = durationLimit
            self.outputDirectory = outputDirectory
            self.sessionName = sessionName
            self.defaultWaitTimeout = defaultWaitTimeout
            self.outlivesSession = outlivesSession
            self.remoteAccess = remoteAccess
            self.videoMode = videoMode
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
        var controller: SessionController?
        var failure: ActionFailure?
        var unmetErrorExpectations: [ExpectationOutcome] = []
    }

    /// Set while the scenario itself performs a step: its failures are reported by the step's rules
    /// (`attempt`), not as a failure of a command from outside.
    @TaskLocal private static var performingStep = false

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
    public var session: CaptureSession? { controller?.session }

    /// The controller every surface acts on the session through (nil before the session is set up):
    /// the scenario's actions, the terminal's keys, `capture serve` and MQTT commands.
    public var controller: SessionController? { control.withLock { $0.controller } }

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
        let controller = SessionController(
            session: session, folders: SessionFolders(outputFolder: builder.outputFolder, remote: options.remoteAccess),
            videoMode: options.videoMode
        ) { [weak self] outcome in
            self?.report(outcome)
        }
        control.withLock { $0.controller = controller }
        for declaration in document.overlays {
            if let text = declaration.fields.text, let targets = try? OverlayTargets.outputs(declaration.outputs, overlay: declaration.name, in: session) {
                controller.rememberOverlayText(text, overlay: declaration.name, on: targets.map(\.name))
            }
        }

        // Subscribe before anything can happen, so that no event is missed.
        let stream = session.events()
        let pump = Task { [log] in
            for await event in stream {
                log.append(name: event.name, fields: event.fields)
                self.emit(.session(event), at: event.instant)
            }
        }

        let freeRunning = document.isFreeRunning
        let scenario = Task {
            if freeRunning {
                await self.runFreely(session)
            } else {
                _ = await self.perform(self.document.scenario, controller: controller, builder: builder)
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
        case .videoTrimmed, .thumbnailGenerated, .libraryItemPicked:
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
    private func perform(_ steps: [ScenarioStep], controller: SessionController, builder: SessionBuilder) async -> Bool {
        for step in steps {
            guard !isStopping else { return false }
            switch step.action {
            case .expect:
                continue
            case .repeat(let count, let body):
                for _ in 0..<count {
                    guard await perform(body, controller: controller, builder: builder) else { return false }
                }
            case .configuration(let block):
                switch await performBlock(block, controller: controller, builder: builder) {
                case .applied, .droppedAsExpected:
                    controller.refreshOverlayTexts()
                case .stopped:
                    return false
                case .failed(let failure):
                    fail(failure)
                    return false
                }
            default:
                guard await attempt(step, name: step.action.statementName, { () async throws(StepError) in try await self.run(step, controller, builder) })
                else { return false }
                // A wait too: what it waited for (a recording that ended by itself) shows in the texts.
                controller.refreshOverlayTexts()
            }
        }
        return true
    }

    /// One statement of the scenario, through the controller, as the scenario's own step.
    private func run(_ step: ScenarioStep, _ controller: SessionController, _ builder: SessionBuilder) async throws(StepError) {
        let outcome = await Self.$performingStep.withValue(true) { () async -> Result<Void, StepError> in
            do throws(StepError) {
                try await self.execute(step.action, controller: controller, builder: builder)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// How a configuration block ended.
    private enum BlockEnd {
        /// Committed: the session has the block's changes.
        case applied
        /// A statement of it, or its commit, failed as `commit-configuration`'s `expect-error=` said:
        /// reported as expected, the block dropped, the session as it was.
        case droppedAsExpected
        /// The run is stopping: the block was dropped.
        case stopped
        /// It failed and nothing expected it: the block was dropped; the failure stops the scenario.
        case failed(ActionFailure)
    }

    /// `begin-configuration` ... `commit-configuration`. The block is all or nothing: a statement of it
    /// that fails (without an `expect-error=` of its own that matches) drops the whole block
    /// (`CaptureSession.cancelConfiguration()`): what the statements before it changed is undone and
    /// the session goes on as it was. That failure, like a failed commit, is the commit's: expected
    /// when `commit-configuration` carries an `expect-error=` that accepts it (the scenario goes on),
    /// else it stops the scenario. A block inside a block is the same, one level in.
    private func performBlock(_ block: ConfigurationBlock, controller: SessionController, builder: SessionBuilder) async -> BlockEnd {
        let session = controller.session
        let commitStep = ScenarioStep(.configuration(block), expectedError: block.commitExpectedError, location: block.commitLocation)
        /// A failure of the block: dropped, then expected or not by the commit.
        func dropped(_ failure: ActionFailure) -> BlockEnd {
            try? session.cancelConfiguration()
            guard let expected = block.commitExpectedError, expected.accepts(failure.errorName) else {
                var failure = failure
                if case .named(let wanted)? = block.commitExpectedError { failure.message += " (commit-configuration's expect-error wanted \(wanted))" }
                return .failed(failure)
            }
            var reported = failure
            reported.message += "; the configuration block was dropped: the session is as it was before begin-configuration"
            reported.expected = true
            emit(.actionFailed(reported))
            return .droppedAsExpected
        }
        session.beginConfiguration()
        for step in block.steps {
            guard !isStopping else {
                try? session.cancelConfiguration()
                return .stopped
            }
            let outcome: StepOutcome
            if case .configuration(let inner) = step.action {
                switch await performBlock(inner, controller: controller, builder: builder) {
                case .applied, .droppedAsExpected: outcome = .done
                case .stopped: outcome = .stopped
                case .failed(let failure): outcome = .failed(failure)
                }
            } else {
                outcome = await settle(step, name: step.action.statementName, { () async throws(StepError) in try await self.run(step, controller, builder) })
            }
            switch outcome {
            case .done:
                continue
            case .stopped:
                try? session.cancelConfiguration()
                return .stopped
            case .failed(let failure):
                return dropped(failure)
            }
        }
        do {
            try await session.commitConfiguration()
        } catch {
            return dropped(
                ActionFailure(
                    location: block.commitLocation, action: "commit-configuration", errorName: error.name, message: error.description, expected: false))
        }
        if block.commitExpectedError != nil { unmet(commitStep, name: "commit-configuration") }
        return .applied
    }

    /// What one step came to by the "when an action fails" rules.
    private enum StepOutcome {
        /// It succeeded, or failed as its `expect-error=` said (reported).
        case done
        /// The run is stopping.
        case stopped
        /// It failed and nothing expected it (not reported yet).
        case failed(ActionFailure)
    }

    /// Runs one action and applies the "when an action fails" rules. False when the scenario must stop.
    private func attempt(_ step: ScenarioStep, name: String, _ body: () async throws(StepError) -> Void) async -> Bool {
        switch await settle(step, name: name, body) {
        case .done: return true
        case .stopped: return false
        case .failed(var failure):
            if case .named(let wanted)? = step.expectedError { failure.message += " (expect-error wanted \(wanted))" }
            fail(failure)
            return false
        }
    }

    /// An `expect-error=` step that succeeded: a failed expectation.
    private func unmet(_ step: ScenarioStep, name: String) {
        guard let expected = step.expectedError else { return }
        let statement = PipelineWriter.lines(of: step, indent: "").first ?? name
        let wanted = expected == .any ? "to fail" : "to fail with \(expected)"
        let outcome = ExpectationOutcome(
            location: step.location, statement: statement, passed: false, seen: nil, message: "expected \(name) \(wanted), but it succeeded")
        control.withLock { $0.unmetErrorExpectations.append(outcome) }
        emit(.expectation(outcome))
    }

    /// Runs one action: a success, or a failure its `expect-error=` accepts (reported as expected), is
    /// `done`; a success of a step expected to fail is a failed expectation (and `done`).
    private func settle(_ step: ScenarioStep, name: String, _ body: () async throws(StepError) -> Void) async -> StepOutcome {
        do {
            try await body()
            unmet(step, name: name)
            return .done
        } catch {
            switch error {
            case .stopped:
                return .stopped
            case .failed(let errorName, let message):
                let expected = step.expectedError?.accepts(errorName) == true
                let failure = ActionFailure(location: step.location, action: name, errorName: errorName, message: message, expected: expected)
                guard expected else { return .failed(failure) }
                emit(.actionFailed(failure))
                return .done
            }
        }
    }

    private func capture(_ body: () async throws(CaptureError) -> Void) async throws(StepError) {
        do { try await body() } catch { throw .failed(name: error.name, message: error.description) }
    }

    /// One action: `wait` here, every other through the controller.
    private func execute(_ action: Action, controller: SessionController, builder: SessionBuilder) async throws(StepError) {
        switch action {
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
        case .configuration, .repeat, .expect:
            // Performed by `perform` (blocks and repeats hold steps; expectations are checked at the end).
            return
        default:
            try await capture { () async throws(CaptureError) in
                guard let command = try action.command(builder: builder, session: controller.session, onNote: { self.emit(.notice($0)) }) else { return }
                try await controller.perform(command)
            }
        }
    }

    /// What a command through the controller came to, as events: notices of the flash mode and the
    /// camera, `video-trimmed`, `thumbnail-generated`; the failure of a command from outside the
    /// scenario (keys, HTTP, MQTT) as `action-failed` (not expected; the run goes on).
    private func report(_ outcome: SessionController.CommandOutcome) {
        switch outcome.result {
        case .success(.flashMode(let mode)):
            emit(.notice("flash mode: \(mode.rawValue)"))
        case .success(.camera(let input)):
            emit(.notice("camera: \(input.device.localizedName) (\(input.device.uniqueID))"))
        case .success(.trimmed(let result, let library)):
            emit(.videoTrimmed(result, libraryLocation: library))
        case .success(.thumbnail(let source, _, let image)):
            emit(.thumbnailGenerated(source: source, image))
        case .success(.picked(let name, let item)):
            emit(.libraryItemPicked(name: name, item))
        case .success:
            break
        case .failure(let error):
            guard !Self.performingStep else { return }
            emit(.actionFailed(ActionFailure(location: nil, action: outcome.command.name, errorName: error.name, message: error.description, expected: false)))
        }
    }

    // MARK: Actions outside the scenario

    /// Performs one `.pipeline` action now, beside the scenario, as a local caller (the user's own
    /// terminal): the same as `controller.perform(_:)` with the action read into a command. A failure
    /// is reported as an `action-failed` event (not expected) but does not stop the run. Configuration
    /// blocks, waits, repeats and expectations are not taken here.
    public func interact(_ action: Action) async throws(CaptureError) -> ControlResult {
        guard let controller, !isStopping else { throw .notRunning(object: "the run") }
        switch action {
        case .configuration, .repeat, .expect, .wait:
            throw .invalidConfiguration(object: action.statementName, reason: "it is a scenario statement, not an interactive action")
        default:
            break
        }
        let builder = SessionBuilder(document: document, outputDirectory: options.outputDirectory)
        let command: ControlCommand?
        do { command = try action.command(builder: builder, session: controller.session, onNote: { self.emit(.notice($0)) }) } catch {
            emit(.actionFailed(ActionFailure(location: nil, action: action.statementName, errorName: error.name, message: error.description, expected: false)))
            throw error
        }
        guard let command else { return .done }
        return try await controller.perform(command)
    }
}
