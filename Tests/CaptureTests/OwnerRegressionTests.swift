import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// What the owner must never do: bring back a finished recording, let another output's unsaved
/// settings block a recording command, or keep a configuration whose commit failed.
@Suite(.serialized) struct OwnerRegressionTests {
    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? -1
    }

    /// Removing the microphone finishes the recording that reads it; adding a microphone again must
    /// not reopen (and empty) the finished file.
    @Test func aFinishedRecordingStaysFinishedWhenItsInputComesBack() async throws {
        let directory = try TemporaryDirectory()
        let session = try await movieSession()
        let movie = CaptureMovieFileOutput(name: "movie")
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(movie)
        try session.addOutput(frames)
        try await session.startRunning()
        let path = directory.path("a.mp4")
        _ = try await movie.startRecording(to: path)
        #expect(await movie.waitUntilRecorded(.milliseconds(800)))
        session.beginConfiguration()
        try session.removeInput(try #require(session.input(named: "mic")))
        try await session.commitConfiguration()
        let result = try #require(movie.lastRecording)
        #expect(result.success && !movie.isRecording)
        session.beginConfiguration()
        try session.addInput(CaptureDeviceInput(device: .testTone, name: "mic"))
        try await session.commitConfiguration()
        #expect(try session.compile().branches.allSatisfy { $0.output != "movie" })
        // Half a second of frames through the session with the microphone back: a reopened file would grow.
        #expect(await frames.waitForFrames(15))
        await session.stopRunning()
        #expect(Self.fileSize(path) == result.fileSize)
        #expect(try ProbedMovie(path).duration > 0.5)
    }

    /// A block that finishes the recording (its microphone leaves) and then fails (an input that cannot
    /// be built) is rolled back without the finished recording's branch.
    @Test func aRollbackDoesNotReopenAFinishedFile() async throws {
        let directory = try TemporaryDirectory()
        let session = try await movieSession()
        let movie = CaptureMovieFileOutput(name: "movie")
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(movie)
        try session.addOutput(frames)
        try await session.startRunning()
        let path = directory.path("b.mp4")
        _ = try await movie.startRecording(to: path)
        #expect(await movie.waitUntilRecorded(.milliseconds(800)))
        session.beginConfiguration()
        try session.removeInput(try #require(session.input(named: "mic")))
        try session.addInput(CaptureDeviceInput(device: .testPattern, name: "cam2", options: InputOptions(pattern: "no-such-pattern")))
        await #expect(throws: CaptureError.self) { try await session.commitConfiguration() }
        let result = try #require(movie.lastRecording)
        #expect(session.isRunning && !movie.isRecording)
        #expect(session.inputs.map(\.name).contains("mic"), "the session runs as it was")
        // Half a second of frames through the rolled-back session: a reopened file would grow.
        #expect(await frames.waitForFrames(15))
        await session.stopRunning()
        #expect(Self.fileSize(path) == result.fileSize)
    }

    /// Stopping a recording changes only its branch: another output's setting, changed but not
    /// committed (and invalid), neither blocks it nor reaches the pipeline.
    @Test func stopRecordingIgnoresAnotherOutputsUncommittedSettings() async throws {
        let directory = try TemporaryDirectory()
        let session = try await movieSession(audio: false)
        let movie = CaptureMovieFileOutput(name: "movie")
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(movie)
        try session.addOutput(frames)
        try await session.startRunning()
        _ = try await movie.startRecording(to: directory.path("c.mp4"))
        #expect(await movie.waitUntilRecorded(.milliseconds(800)))
        frames.pixelFormat = "NOPE"  // not committed
        let started = ContinuousClock.now
        let result = try await movie.stopRecording()
        #expect(result.success, "\(String(describing: result.error))")
        #expect(ContinuousClock.now - started < .seconds(5))
        frames.pixelFormat = "BGRx"
        #expect(try !session.compile().branches.map(\.output).contains("movie"))
        await session.stopRunning()
    }

    /// A commit that fails after validation (a folder that cannot be made) leaves the configuration as
    /// it was: the output is not in the session, and the next commit works.
    @Test func aCommitThatFailsToPrepareLeavesNothingBehind() async throws {
        let (session, _) = try makeSession(preset: .cif352x288)
        try session.addOutput(CaptureVideoDataOutput(name: "frames"))
        try await session.startRunning()
        let sequence = CaptureImageSequenceOutput(name: "seq", location: "/proc/capture-test/%05d.png")
        session.beginConfiguration()
        try session.addOutput(sequence)
        await #expect(throws: CaptureError.self) { try await session.commitConfiguration() }
        #expect(!session.outputs.contains { $0 === sequence })
        session.beginConfiguration()
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        try await session.commitConfiguration()
        #expect(session.outputs.map(\.name) == ["frames", "preview"])
        await session.stopRunning()
    }
}

/// A session whose input reconnects survives a replug: the device registry (the seam the device
/// monitor feeds) says the device went and came back; the real replug runs on vivid in the hardware tier.
@Suite(.serialized) struct ReconnectionTests {
    /// A camera of these tests alone (the registry is process-wide: other suites' sessions on the test
    /// pattern must not see it come and go): the test pattern under another id.
    static func camera(_ id: String) -> CaptureDevice {
        CaptureDevice(
            uniqueID: id, localizedName: "Replugged test camera", mediaType: .video,
            formats: CaptureDevice.testPattern.formats, kind: .testPattern)
    }

    @Test func aReconnectingInputResumesAndTheRecordingGoesOnInANewFile() async throws {
        let directory = try TemporaryDirectory()
        let device = Self.camera("test-replug-recording")
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: device, name: "camera", options: InputOptions(reconnects: true)))
        try session.setSessionPreset(.cif352x288)
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(movie)
        let events = session.events()
        // The steps are waited for by their events (the session stops, then finishes the file, and the
        // device monitor may take a while on its first use): `running` is false before the drain ends.
        let progress = session.events()
        try await session.startRunning()
        let first = try await movie.startRecording(to: directory.path("take.mp4"))
        #expect(await movie.waitUntilRecorded(.milliseconds(800)))
        DeviceRegistry.shared.events.post(.disconnected(device))
        let stopped = await collectEvents(progress, until: { $0.name == "session-stopped" }, timeout: .seconds(20))
        #expect(stopped.last?.name == "session-stopped", "\(stopped.map(\.name))")
        #expect(session.isAwaitingReconnection && !session.isRunning)
        #expect(movie.lastRecording?.success == true, "\(String(describing: movie.lastRecording?.error))")
        DeviceRegistry.shared.events.post(.connected(device))
        let resumed = await collectEvents(progress, until: { $0.name == "recording-started" }, timeout: .seconds(20))
        #expect(resumed.map(\.name).contains("resumed") && resumed.last?.name == "recording-started", "\(resumed.map(\.name))")
        #expect(session.isRunning && movie.isRecording)
        #expect(movie.outputFileURL?.lastPathComponent == "take-1.mp4")
        #expect(await movie.waitUntilRecorded(.milliseconds(800)))
        _ = try await movie.stopRecording()
        await session.stopRunning()
        let stops = Locked(0)
        let seen = await collectEvents(
            events,
            until: { event in
                event.name == "session-stopped"
                    && stops.withLock { count in
                        count += 1; return count
                    } == 2
            })
        #expect(
            seen.map { $0.name }.filter { ["interrupted", "resumed", "session-started"].contains($0) } == [
                "session-started", "interrupted", "session-started", "resumed",
            ])
        for name in [first.lastPathComponent, "take-1.mp4"] {
            #expect(try ProbedMovie(directory.path(name)).duration > 0.5, "\(name)")
        }
    }

    /// Stopping while the session waits for its device ends the wait: nothing starts again later.
    @Test func stoppingEndsTheWaitForTheDevice() async throws {
        let device = Self.camera("test-replug-stop")
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: device, name: "camera", options: InputOptions(reconnects: true)))
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        // A second session on the same camera keeps waiting: when it has resumed, the device's return
        // was delivered, and the stopped session had its chance to act on it.
        let witness = CaptureSession()
        try witness.addInput(CaptureDeviceInput(device: device, name: "camera", options: InputOptions(reconnects: true)))
        try witness.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        try await session.startRunning()
        try await witness.startRunning()
        let witnessEvents = witness.events()
        DeviceRegistry.shared.events.post(.disconnected(device))
        #expect(await waitUntil { session.isAwaitingReconnection && witness.isAwaitingReconnection })
        await session.stopRunning()
        #expect(!session.isAwaitingReconnection)
        DeviceRegistry.shared.events.post(.connected(device))
        let resumed = await collectEvents(witnessEvents, until: { $0.name == "resumed" }, timeout: .seconds(20))
        #expect(resumed.last?.name == "resumed", "\(resumed.map(\.name))")
        await witness.stopRunning()
        #expect(!session.isRunning && !session.isAwaitingReconnection)
    }
}

/// What happens to a recording's folder while it records is reported, never hidden behind success.
@Suite struct RecordingFolderTests {
    @Test func aFolderRemovedMidRecordingIsAFailedRecording() async throws {
        let directory = try TemporaryDirectory()
        let session = try await movieSession(audio: false)
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(movie)
        try await session.startRunning()
        let folder = directory.path("takes")
        _ = try await movie.startRecording(to: folder + "/take.mp4")
        #expect(await movie.waitUntilRecorded(.milliseconds(600)))
        try FileManager.default.removeItem(atPath: folder)
        let result = try await movie.stopRecording()
        await session.stopRunning()
        #expect(!result.success)
        guard case .recordingFailed(_, _, let reason)? = result.error else { Issue.record("\(String(describing: result.error))"); return }
        #expect(reason.contains("removed while it was being recorded"))
        #expect(session.outputs.count == 2, "the session is unchanged")
    }
}

/// Callers on many tasks at once: the owner serializes them, each gets a typed outcome, and the
/// session ends in a state that matches what was asked last.
@Suite struct ConcurrentCallerTests {
    @Test func startStopCommitsAndPhotosFromManyTasks() async throws {
        let (session, _) = try makeSession(preset: .cif352x288)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(photo)
        try await session.startRunning()
        let outcomes = Locked<[String: Int]>([:])
        func note(_ outcome: String) { outcomes.withLock { $0[outcome, default: 0] += 1 } }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<6 {
                        switch (worker + round) % 4 {
                        case 0:
                            do throws(CaptureError) { _ = try await photo.capturePhoto(); note("photo") } catch { note(error.name) }
                        case 1:
                            let extra = CaptureVideoDataOutput(name: "extra\(worker)")
                            session.beginConfiguration()
                            do throws(CaptureError) {
                                try session.addOutput(extra)
                                try await session.commitConfiguration()
                                session.beginConfiguration()
                                try session.removeOutput(extra)
                                try await session.commitConfiguration()
                                note("commit")
                            } catch {
                                while session.isConfiguring { try? await session.commitConfiguration() }
                                note(error.name)
                            }
                        case 2:
                            await session.stopRunning()
                            note("stop")
                        default:
                            do throws(CaptureError) { try await session.startRunning(); note("start") } catch { note(error.name) }
                        }
                    }
                }
            }
        }
        let seen = outcomes.withLock { $0 }
        print("concurrent callers: \(seen.sorted { $0.key < $1.key })")
        // Every call came back (24 of them), each with a result or a named error.
        #expect(seen.values.reduce(0, +) == 24, "\(seen)")
        #expect(seen["photo", default: 0] + seen["commit", default: 0] > 0, "some calls found the session running: \(seen)")
        #expect(seen.keys.allSatisfy { ["photo", "commit", "stop", "start"].contains($0) || CaptureError.allNames.contains($0) }, "\(seen)")
        // The owner still answers: it starts, takes a photo and stops.
        try await session.startRunning()
        #expect(session.isRunning)
        _ = try await photo.capturePhoto()
        #expect(session.outputs.map(\.name) == ["photo"])
        await session.stopRunning()
        #expect(!session.isRunning)
    }

    /// An output added while the session starts (before it runs, so not as a live edit) runs once
    /// the session does: added before, during or after the start, it gets frames.
    @Test(arguments: [0, 1, 2, 3, 4, 6, 8, 12, 16, 24]) func anOutputAddedWhileTheSessionStartsRuns(afterMilliseconds delay: Int) async throws {
        let (session, _) = try makeSession(preset: .cif352x288)
        try session.addOutput(CaptureVideoDataOutput(name: "kept"))
        async let started: Void = session.startRunning()
        try await Task.sleep(for: .milliseconds(delay))
        let late = CaptureVideoDataOutput(name: "late")
        try session.addOutput(late)
        try await started
        #expect(await firstFrame(late) != nil, "added \(delay) ms after the start was asked for")
        await session.stopRunning()
    }

    /// A block begun on one task while another task's block commits starts from that commit: it
    /// never brings back an output the other task removed, nor drops one it added. Run on a stopped
    /// and on a running session; every task adds and removes outputs of its own, in blocks and alone.
    @Test(arguments: [false, true]) func blocksOnManyTasksNeverUndoEachOther(running: Bool) async throws {
        let (session, _) = try makeSession(preset: .cif352x288)
        try session.addOutput(CaptureVideoDataOutput(name: "kept"))
        if running { try await session.startRunning() }
        let failures = Locked<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    for round in 0..<(running ? 4 : 25) {
                        let output = CaptureVideoDataOutput(name: "w\(worker)r\(round)")
                        do throws(CaptureError) {
                            if round.isMultiple(of: 2) {
                                session.beginConfiguration()
                                try session.addOutput(output)
                                try await session.commitConfiguration()
                                session.beginConfiguration()
                                try session.removeOutput(output)
                                try await session.commitConfiguration()
                            } else {
                                try session.addOutput(output)
                                try session.removeOutput(output)
                            }
                        } catch {
                            failures.withLock { $0.append("\(output.name): \(error)") }
                            while session.isConfiguring { try? await session.commitConfiguration() }
                        }
                    }
                }
            }
        }
        #expect(failures.value.isEmpty, "\(failures.value)")
        #expect(session.outputs.map(\.name) == ["kept"])
        if running {
            // What runs follows the last commit (an empty block waits for the edits queued before
            // it): one frames branch, for the output kept.
            session.beginConfiguration()
            try await session.commitConfiguration()
            #expect(session.runningElementFactories.filter { $0 == "appsink" }.count == 1, "\(session.runningElementFactories)")
            let frames = try #require(session.output(named: "kept") as? CaptureVideoDataOutput)
            #expect(await firstFrame(frames) != nil)
            await session.stopRunning()
        }
    }
}
