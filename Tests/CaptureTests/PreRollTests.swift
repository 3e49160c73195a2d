import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// Pre-roll: the movie output keeps the last seconds encoded, so a recording begins before its trigger.
@Suite(.serialized) struct PreRollTests {
    func session(preRoll: Duration) throws -> (CaptureSession, CaptureMovieFileOutput) {
        let session = CaptureSession(name: "pre-roll")
        try session.addInput(CaptureDeviceInput(deviceID: "test-pattern"))
        try session.setSessionPreset(.cif352x288)
        var settings = MovieSettings()
        settings.preRoll = preRoll
        let movie = CaptureMovieFileOutput(name: "movie", settings: settings)
        try session.addOutput(movie)
        return (session, movie)
    }

    /// The session's running time now, in seconds (bounded wait until the branch is live).
    func runningTime(_ movie: CaptureMovieFileOutput) async -> Double? {
        guard await waitUntil(timeout: .seconds(10), { movie.handleState.value?.runningTime != nil }) else { return nil }
        return movie.handleState.value?.runningTime.map { Double($0) / 1e9 }
    }

    /// Trigger at t = 5 s with a 2 s pre-roll, stop 2 s later: the file starts within one GOP (1 s) of
    /// t = 3 s. Proved by ffprobe's count of the frames in the file (4 to 5 s of 30 fps, where a
    /// recording without pre-roll holds 2 s) and by the first frame's capture time.
    @Test func aRecordingTriggeredAtFiveSecondsStartsWithinOneGOPOfThreeSeconds() async throws {
        let folder = try TemporaryDirectory()
        let (session, movie) = try session(preRoll: .seconds(2))
        try await session.startRunning()
        // The session's running time (the pipeline clock's, which the frames carry) reaches 5 s.
        _ = await runningTime(movie)
        #expect(await waitUntil { (movie.handleState.value?.runningTime ?? 0) >= 5_000_000_000 })
        let now = await runningTime(movie) ?? 0
        // The trigger is at 5 s or a little later on a busy machine: what follows is measured from it.
        let trigger = now
        #expect(trigger >= 5)
        try await movie.startRecording(to: folder.path("pre.mp4"))
        #expect(await waitUntil { Double(movie.handleState.value?.runningTime ?? 0) / 1e9 >= trigger + 2 })
        let stopAt = await runningTime(movie) ?? 0
        let result = try await movie.stopRecording()
        await session.stopRunning()

        #expect(result.success, "\(String(describing: result.error))")
        let first = try #require(result.firstTimestamp)
        // A key frame a second: the first frame is at most one GOP before trigger - 2 s (a little more
        // for the frames between the camera and the encoder), never after it.
        #expect(first <= trigger - 2 + 0.05, "first frame at \(first) s, trigger at \(trigger) s")
        #expect(first >= trigger - 2 - 1 - 0.25, "first frame at \(first) s, trigger at \(trigger) s")
        let probed = try ProbedMovie(result.location, countFrames: true)
        let frames = Int(probed.video?.nb_read_frames ?? "") ?? 0
        let expected = (stopAt - first) * 30
        #expect(Double(frames) >= expected - 15 && Double(frames) <= expected + 15, "\(frames) frames, \(expected) expected")
        #expect(frames >= 110, "\(frames) frames: the file holds the 2 s before the trigger")
        #expect(probed.duration >= 3.6 && probed.duration <= stopAt - first + 0.5, "\(probed.duration) s")
        #expect(probed.video?.codec_name == "h264")
        #expect(result.videoFrameCount == frames)
    }

    /// The file stays crash-safe: fragments are on disk while it records.
    @Test func aPreRollRecordingIsWrittenInFragments() async throws {
        let folder = try TemporaryDirectory()
        let (session, movie) = try session(preRoll: .seconds(1))
        try await session.startRunning()
        // The ring holds its second (2 s of running time), then 3 s more are recorded.
        _ = await runningTime(movie)
        #expect(await waitUntil { (movie.handleState.value?.runningTime ?? 0) >= 2_000_000_000 })
        let url = try await movie.startRecording(to: folder.path("fragments.mp4"))
        let started = movie.handleState.value?.runningTime ?? 0
        #expect(await waitUntil { (movie.handleState.value?.runningTime ?? 0) >= started + 3_000_000_000 })
        // Read while recording, as a killed process would leave it.
        let copy = folder.path("copy.mp4")
        try FileManager.default.copyItem(atPath: url.path, toPath: copy)
        let partial = try ProbedMovie(copy, countFrames: true)
        #expect((Int(partial.video?.nb_read_frames ?? "") ?? 0) >= 30)
        #expect(throws: CaptureError.self) { try movie.pauseRecording() }
        _ = try await movie.stopRecording()
        await session.stopRunning()
    }

    @Test func preRollSettingsAreChecked() {
        var settings = MovieSettings()
        settings.preRoll = .seconds(90)
        #expect(throws: CaptureError.self) { _ = try settings.resolvedFormat(for: "a.mp4", hasAudioInput: false, output: "m") }
        settings.preRoll = .seconds(2)
        #expect(throws: CaptureError.self) { _ = try settings.resolvedFormat(for: "a.webm", hasAudioInput: false, output: "m") }
        #expect(throws: CaptureError.self) { _ = try settings.resolvedFormat(for: "a.mp4", hasAudioInput: true, output: "m") }
        settings.audioCodec = MovieAudioCodec.none
        #expect(throws: Never.self) { _ = try settings.resolvedFormat(for: "a.mp4", hasAudioInput: true, output: "m") }
        #expect(throws: Never.self) { _ = try settings.resolvedFormat(for: "a.mkv", hasAudioInput: false, output: "m") }
    }
}
