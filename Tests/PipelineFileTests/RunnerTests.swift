import Capture
import Foundation
import Testing

@testable import PipelineFile

/// Runs scenarios on the virtual test-pattern camera: no camera, display or microphone is needed.
@Suite("Running scenarios", .serialized)
struct RunnerTests {
    func run(
        _ text: String, options: ScenarioRunner.Options = ScenarioRunner.Options(durationLimit: .seconds(30)),
        onEvent: (@Sendable (ScenarioRunner, RunnerEvent) -> Void)? = nil
    ) async throws -> ScenarioResult {
        let runner = ScenarioRunner(document: try parsed(text, file: "scenario.pipeline"), options: options)
        return await runner.run { event in onEvent?(runner, event) }
    }

    static let camera = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern, pattern=ball
        output, name=preview, kind=preview, sink=none


        """

    @Test func scenarioWithLiveReconfigurationPasses() async throws {
        let directory = try TemporaryDirectory()
        let text =
            Self.camera + #"""
                start
                wait, event=session-started
                begin-configuration
                    add-output, name=frames, kind=frames, location="shots/%03d.png", max-rate=10
                commit-configuration
                wait, event=frame-saved, output=frames, count=2
                remove-output, name=frames
                repeat, count=2, actions={ "add-output, name=extra, kind=frames", "wait, duration=0.1", "remove-output, name=extra" }
                stop
                wait, event=session-stopped
                expect, event=session-started, count=1
                expect, event=configuration-committed, at-least=2
                expect, event=frame-saved, output=frames, at-least=2
                expect, event=action-failed, count=0
                """#
        let runner = ScenarioRunner(
            document: try parsed(text, file: "scenario.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let streamed = Task { await runner.events.reduce(into: [String]()) { $0.append($1.name) } }
        let result = await runner.run()
        #expect(result.exitCode == 0)
        #expect(result.ending == .completed)
        #expect(result.failure == nil)
        #expect(result.failedExpectations.isEmpty)
        #expect(result.passedExpectations.map { $0.location?.line } == [15, 16, 17, 18])
        let names = result.events.map(\.name)
        #expect(await streamed.value == names)
        #expect(names.first == "session-started")
        #expect(names.filter { $0 == "configuration-committed" }.count >= 2)
        #expect(names.suffix(4) == ["expectation-passed", "expectation-passed", "expectation-passed", "expectation-passed"])
        #expect(result.events.contains { $0.name == "configuration-committed" && $0.jsonLine.contains(#""added-outputs": ["frames"]"#) })
        // The files are where the output directory says, and they are PNG files (checked by signature).
        let shots = try FileManager.default.contentsOfDirectory(atPath: directory.path("shots")).sorted()
        #expect(shots.count >= 2)
        let header = try Data(contentsOf: URL(fileURLWithPath: directory.path("shots/\(shots[0])"))).prefix(8)
        #expect(Array(header) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test func failedExpectationExitsOneAndSaysWhich() async throws {
        let result = try await run(
            Self.camera + """
                start
                wait, duration=0.2
                stop
                expect, event=frame-saved, at-least=1
                expect, event=session-started, count=1
                """)
        #expect(result.exitCode == 1)
        #expect(result.ending == .completed)
        let failed = try #require(result.failedExpectations.first)
        #expect(result.failedExpectations.count == 1)
        #expect(failed.location?.line == 8)
        #expect(failed.statement == "expect, event=frame-saved, at-least=1")
        #expect(failed.message == "expected at least 1 'frame-saved' event, saw 0")
        #expect(failed.description == "line 8: expect, event=frame-saved, at-least=1: expected at least 1 'frame-saved' event, saw 0")
        #expect(result.passedExpectations.count == 1)
        let event = try #require(result.events.first { $0.name == "expectation-failed" })
        let json = try JSONSerialization.jsonObject(with: Data(event.jsonLine.utf8)) as? [String: Any]
        #expect(json?["line"] as? Int == 8)
        #expect(json?["seen"] as? Int == 0)
    }

    @Test func expectedErrorsLetTheScenarioGoOn() async throws {
        let result = try await run(
            Self.camera + """
                start
                remove-output, name=nope, expect-error=unknown-output
                add-output, name=camera, kind=preview, sink=none, expect-error=duplicate-name
                configure-device, input=camera, focus-mode=continuous, expect-error=true
                stop
                expect, event=action-failed, count=3
                expect, event=session-stopped, count=1
                """)
        #expect(result.exitCode == 0)
        #expect(result.failure == nil)
        let failures = result.events.compactMap { event -> ActionFailure? in
            if case .actionFailed(let failure) = event.kind { return failure }
            return nil
        }
        #expect(failures.map(\.errorName) == ["unknown-output", "duplicate-name", "control-not-supported"])
        #expect(failures.allSatisfy { $0.expected })
        #expect(failures.map { $0.location?.line } == [6, 7, 8])
        #expect(result.passedExpectations.count == 2)
    }

    /// configure-device changes the running camera under the lock and each change's first frame comes
    /// back as `device-configured`. (The values are the test pattern's defaults: other suites of this
    /// process read its frames, so these tests never change what they look like.)
    @Test func configureDeviceReportsTheFirstFrameOfEachChange() async throws {
        let result = try await run(
            Self.camera + """
                start
                wait, event=session-started
                configure-device, input=camera, zoom=1, controls={ "brightness=128", "white_balance_automatic=true" }
                wait, event=device-configured, count=3
                configure-device, input=camera, controls={ "brightness=256" }, expect-error=control-out-of-range
                configure-device, input=camera, controls={ "sharpness=1" }, expect-error=unknown-control
                configure-device, input=camera, torch-mode=on, expect-error=control-not-supported
                configure-device, input=camera, flash-mode=on, expect-error=flash-not-supported
                configure-device, input=camera, zoom=9, expect-error=control-out-of-range
                stop
                expect, event=device-configured, count=3
                expect, event=action-failed, count=5
                expect, event=runtime-error, count=0
                """)
        #expect(result.exitCode == 0)
        let configured = result.events.compactMap { event -> SessionEvent? in
            if case .session(let session) = event.kind, session.name == "device-configured" { return session }
            return nil
        }
        #expect(configured.map { $0.field("change")?.description } == ["zoom=1", "brightness=128", "white_balance_automatic=1"])
        #expect(configured.allSatisfy { $0.field("input") == .string("camera") && $0.field("device") == .string("test-pattern") })
        #expect(configured.allSatisfy { $0.field("frame") != nil && $0.field("frames-before") == .int(0) })
        // The lock was the statement's: it is free again.
        #expect(CaptureDevice.testPattern.configurationLockHolder == nil)
    }

    /// A lock another holder has is `device-locked`, naming the holder; the session keeps running.
    @Test func aLockHeldElsewhereIsDeviceLockedNamingTheHolder() async throws {
        try CaptureDevice.testPattern.lockForConfiguration(holder: "the camera manager")
        defer { CaptureDevice.testPattern.unlockForConfiguration() }
        let result = try await run(
            Self.camera + """
                start
                configure-device, input=camera, zoom=1
                wait, duration=0.3
                stop
                """)
        #expect(result.exitCode == 1)
        let failure = try #require(result.failure)
        #expect(failure.errorName == "device-locked")
        #expect(failure.message.contains("'test-pattern' is locked for configuration by the camera manager"))
        #expect(!result.events.contains { $0.name == "runtime-error" })
    }

    @Test func anExpectedErrorThatDoesNotComeIsAFailedExpectation() async throws {
        let result = try await run(
            Self.camera + """
                start, expect-error=true
                stop
                expect, event=session-stopped, count=1
                """)
        #expect(result.exitCode == 1)
        #expect(result.failure == nil)
        #expect(result.failedExpectations.map(\.message) == ["expected start to fail, but it succeeded"])
        #expect(result.failedExpectations.first?.location?.line == 5)
        // The scenario went on: stop ran and the expectation at the end was checked.
        #expect(result.passedExpectations.count == 1)
    }

    @Test func aDifferentErrorThanExpectedStopsTheScenario() async throws {
        let result = try await run(
            Self.camera + """
                start
                remove-output, name=nope, expect-error=duplicate-name
                wait, duration=20
                """)
        #expect(result.exitCode == 1)
        #expect(result.ending == .actionFailed)
        let failure = try #require(result.failure)
        #expect(failure.errorName == "unknown-output")
        #expect(failure.location?.line == 6)
        #expect(failure.message.hasSuffix("(expect-error wanted duplicate-name)"))
        #expect(result.events.last { $0.name == "session-stopped" } != nil)
    }

    @Test func aSettingTheDeviceLacksFailsClearlyAndStopsGracefully() async throws {
        let started = ContinuousClock.now
        let result = try await run(
            Self.camera + """
                start
                wait, event=session-started
                configure-device, input=camera, focus-mode=continuous
                wait, duration=20
                expect, event=session-started, count=1
                """)
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(result.exitCode == 1)
        #expect(result.ending == .actionFailed)
        let failure = try #require(result.failure)
        #expect(
            failure
                == ActionFailure(
                    location: SourceLocation(file: "scenario.pipeline", line: 7, column: 1), action: "configure-device",
                    errorName: "control-not-supported",
                    message: "the device 'test-pattern' does not support focus-mode=continuous: it has no focus_automatic_continuous control",
                    expected: false))
        let names = result.events.map(\.name)
        let failedAt = try #require(names.firstIndex(of: "action-failed"))
        #expect(names[failedAt...].contains("session-stopped"))
        let line = try #require(result.events.first { $0.name == "action-failed" }).jsonLine
        #expect(line.contains(#""line": 7, "action": "configure-device", "error": "control-not-supported""#))
    }

    @Test func anOverlayThatCannotBeDrawnFailsAtSetupNamingItsLine() async throws {
        let result = try await run(
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            overlay, output=preview, image="no-such-logo.png"
            start
            """)
        #expect(result.exitCode == 1)
        #expect(result.ending == .setupFailed)
        let failure = try #require(result.failure)
        #expect(failure.action == "overlay")
        #expect(failure.location?.line == 3)
        #expect(failure.errorName == "overlay-image-unreadable")
        #expect(failure.message.contains("no-such-logo.png") && failure.message.contains("no such file"))
        #expect(!result.events.contains { $0.name == "session-started" })
    }

    /// The recipe's own controls: texts that show the flash mode and the camera follow the scenario's
    /// toggles; a bad change is a typed error the scenario can expect, and the session goes on.
    @Test func overlayTextsFollowTheFlashModeAndTheCamera() async throws {
        let text =
            Self.camera + """
                output, name=photo, kind=photo
                overlay, name=flash, output=preview, text="Flash: {flash-mode}", position=top-left
                overlay, name=camera, output={ preview, photo }, text="{camera} camera", position=top-right
                start
                toggle-flash
                wait, duration=0.2
                begin-configuration
                remove-input, name=camera
                add-input, name=front, device=test-pattern, pattern=snow
                commit-configuration
                set-overlay, name=flash, color=yellow
                set-overlay, name=nothing, text="x", expect-error=unknown-overlay
                set-overlay, name=flash, font="No Such Font", expect-error=unknown-font
                set-overlay, name=flash, position=< 0.5, 0.5 >
                """
        let runner = ScenarioRunner(document: try parsed(text, file: "scenario.pipeline"), options: ScenarioRunner.Options(durationLimit: .seconds(30)))
        let result = await runner.run()
        #expect(result.exitCode == 0, "\(result)")
        let session = try #require(runner.session)
        func shown(_ output: String, _ name: String) -> String? {
            guard case .text(let text, _)? = session.output(named: output)?.overlays.first(where: { $0.name == name })?.content else { return nil }
            return text
        }
        // The test pattern has no flash: the button goes from off to auto. The camera is the input's name.
        #expect([shown("preview", "flash"), shown("preview", "camera"), shown("photo", "camera")] == ["Flash: Auto", "front camera", "front camera"])
        let flash = try #require(session.output(named: "preview")?.overlays.first { $0.name == "flash" })
        #expect(flash.position == .point(x: 0.5, y: 0.5))
        guard case .text(_, let style) = flash.content else { Issue.record("not a text"); return }
        #expect(style.color == .yellow)
    }

    @Test func aWaitThatTimesOutFails() async throws {
        let result = try await run(
            Self.camera + """
                start
                wait, event=frame-saved, output=preview, count=2, timeout="300ms"
                """)
        #expect(result.exitCode == 1)
        let failure = try #require(result.failure)
        #expect(failure.errorName == "wait-timed-out")
        #expect(failure.message.hasPrefix("no 'frame-saved' (output=preview) events within 300 ms: waited for 2 since the run started, saw 0"))
    }

    @Test func aStopRequestEndsTheRunGracefullyWithExitZero() async throws {
        let started = ContinuousClock.now
        let result = try await run(
            Self.camera + """
                start
                wait, duration=30
                expect, event=session-started, count=5
                """
        ) { runner, event in
            if event.name == "session-started" { runner.requestStop() }
        }
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(result.ending == .stopRequested)
        #expect(result.exitCode == 0)
        // A scenario cut short does not check its expectations.
        #expect(result.passedExpectations.isEmpty && result.failedExpectations.isEmpty)
        #expect(result.events.map(\.name).contains("session-stopped"))
    }

    @Test func cancellingTheRunIsAStopRequest() async throws {
        let runner = ScenarioRunner(document: try parsed(Self.camera + "start\nwait, duration=30\n"))
        let task = Task { await runner.run() }
        for await event in runner.events where event.name == "session-started" {
            task.cancel()
        }
        let result = await task.value
        #expect(result.ending == .stopRequested)
        #expect(result.exitCode == 0)
    }

    @Test func aFileWithoutActionsRunsUntilTheDurationLimit() async throws {
        let result = try await run(
            Self.camera + "expect, event=session-started, count=1\n",
            options: ScenarioRunner.Options(durationLimit: .milliseconds(400)))
        #expect(result.ending == .completed)
        #expect(result.exitCode == 0)
        #expect(result.passedExpectations.count == 1)
        #expect(result.events.map(\.name).filter { $0.hasPrefix("session-") } == ["session-started", "session-stopped"])
        #expect(result.events.first.map { $0.time >= 0 && $0.time < 10 } == true)
    }

    @Test func faultInjectionInterruptsAFreeRunningSession() async throws {
        let failing = """
            input, name=camera, device=test-pattern, fail-after=5
            output, name=preview, kind=preview, sink=none

            """
        let expected = try await run(failing + "expect, event=interrupted, count=1\n")
        #expect(expected.ending == .sessionEnded)
        #expect(expected.exitCode == 0)
        #expect(expected.events.contains { $0.name == "interrupted" && $0.fields.contains { $0.0 == "reason" } })
        // With nothing expected, a session that dies is a runtime failure.
        let unexpected = try await run(failing)
        #expect(unexpected.ending == .sessionEnded)
        #expect(unexpected.exitCode == 1)
    }

    @Test func eventLines() throws {
        let failure = ActionFailure(
            location: SourceLocation(file: "f", line: 3, column: 1), action: "start", errorName: "device-busy",
            message: "the device 'x' is busy", expected: false)
        let event = RunnerEvent(.actionFailed(failure), time: 1.5)
        #expect(
            event.jsonLine
                == #"{"event": "action-failed", "time": 1.500, "line": 3, "action": "start", "error": "device-busy", "message": "the device 'x' is busy"}"#)
        #expect(event.readableLine == #"   1.500  action-failed line=3 action=start error=device-busy message="the device 'x' is busy""#)
        let session = SessionEvent(.frameSaved(output: "frames", location: "/tmp/a b.png"), at: .now)
        let json = EventFormat.json(session, since: session.instant - .seconds(2))
        #expect(json == #"{"event": "frame-saved", "time": 2.000, "output": "frames", "location": "/tmp/a b.png"}"#)
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) is [String: Any])
        #expect(RunnerEvent(.notice("no camera"), time: 0).readableLine == #"   0.000  notice message="no camera""#)
    }
}
