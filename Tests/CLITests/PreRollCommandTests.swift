import CaptureTestSupport
import Foundation
import Testing

/// `capture record --pre-roll`: the file begins before the trigger, read back by ffprobe.
@Suite(.serialized) struct PreRollCommandTests {
    func frames(_ path: String) throws -> (frames: Int, duration: Double) {
        let probe = try tool([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames:format=duration",
            "-of", "default=noprint_wrappers=1:nokey=1", path,
        ])
        let values = probe.output.split(separator: "\n").map(String.init)
        return (Int(values.first ?? "") ?? 0, Double(values.last ?? "") ?? 0)
    }

    /// Started 4 s in with 2 s of pre-roll and a 5 s limit: 5 s of 30 fps, of which 2 s came before the start.
    @Test func startAfterWithPreRollRecordsTheSecondsBefore() throws {
        let scratch = try Scratch()
        let result = try capture([
            "record", "-o", scratch.file("pre.mp4"), "-i", "test-pattern", "--size", "352x288",
            "--pre-roll", "2", "--start-after", "4", "--duration", "5",
        ])
        #expect(result.status == 0, "\(result.error)")
        let probed = try frames(scratch.file("pre.mp4"))
        #expect(abs(probed.frames - 150) <= 3, "\(probed.frames) frames")
        #expect(abs(probed.duration - 5) < 0.1)
    }

    /// Without --start-after the recording starts on SIGUSR1; Ctrl-C then finishes the file. The file
    /// holds the pre-roll: more time than passed from the signal to the end of the process. (No bound
    /// on how soon the process reacts: a busy machine may be slow to start or to stop the recording.)
    @Test func sigusr1StartsThePreRollRecording() async throws {
        let scratch = try Scratch()
        let launched = ContinuousClock.now
        let child = try ChildProcess([captureBinary, "record", "-o", scratch.file("usr1.mp4"), "-i", "test-pattern", "--size", "352x288", "--pre-roll", "2"])
        let output = child.collectOutput(includingErrors: true)
        // The camera runs once the command says so; 3 s later the ring holds 2 s and a key frame before.
        #expect(await output.wait(timeout: .seconds(30)) { $0.contains { $0.contains("send SIGUSR1") } })
        try await Task.sleep(for: .seconds(3))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("usr1.mp4")))
        let triggered = ContinuousClock.now
        child.signal(SIGUSR1)
        try await Task.sleep(for: .seconds(1))
        child.signal(SIGINT)
        #expect(child.wait().status == 0)
        let sinceTrigger = (ContinuousClock.now - triggered) / .seconds(1)
        let sinceLaunch = (ContinuousClock.now - launched) / .seconds(1)
        #expect(await output.wait { $0.contains { $0.contains("usr1.mp4") } })
        let probed = try frames(scratch.file("usr1.mp4"))
        print("measured: \(probed.frames) frames, \(probed.duration) s; \(sinceTrigger) s from the signal to the exit")
        // 2 s of pre-roll or more (from a key frame; 30 fps), and time from before the signal.
        #expect(probed.frames >= 59, "\(probed.frames) frames")
        #expect(probed.duration > sinceTrigger + 0.5, "\(probed.duration) s recorded, \(sinceTrigger) s after the signal")
        // Never more than was captured since the command started.
        #expect(Double(probed.frames) <= sinceLaunch * 30 + 2, "\(probed.frames) frames in \(sinceLaunch) s")
    }

    @Test func compileShowsThePreRollFilePipeline() throws {
        let scratch = try Scratch()
        try scratch.write(
            "pre.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=clip, kind=movie, location="clip.mp4", pre-roll=2s

            """)
        let result = try capture(["compile", scratch.file("pre.pipeline")])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("appsink name=clip_sink"))
        #expect(result.output.contains("# Movie output 'clip' has a pre-roll of 2.0 s"))
        #expect(result.output.contains("mp4mux fragment-duration=1000 name=clip_preroll_mux ! filesink"))
        #expect(!result.output.contains("# While movie output"))
    }

    @Test func preRollOptionsAreChecked() throws {
        let scratch = try Scratch()
        for (arguments, message) in [(["--pre-roll", "90"], "at most 60"), (["--pre-roll", "2", "--audio", "test-tone"], "video only")] {
            let result = try capture(["record", "-o", scratch.file("x.mp4"), "-i", "test-pattern"] + arguments)
            #expect(result.status == 64)
            #expect(result.error.contains(message), "\(result.error)")
        }
    }
}
