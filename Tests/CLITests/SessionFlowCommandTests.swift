import Capture
import CaptureTestSupport
import Foundation
import Testing

/// Issue #29 end to end: `capture` on the shipped files, checked with identify and ffprobe.
@Suite("Issue 29 through capture", .serialized) struct SessionFlowCommandTests {
    /// Runs `capture` in a folder, with the album in the scratch folder (never the user's own).
    func capture(_ arguments: [String], in directory: String, album scratch: Scratch) throws -> (status: Int32, output: String, error: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["CAPTURE_PICTURES_DIR"] = scratch.file("Pictures")
        environment["CAPTURE_VIDEOS_DIR"] = scratch.file("Videos")
        let command = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory, captureBinary] + arguments
        let result = try ChildProcess(command, environment: environment).finish()
        return (result.status, result.output, result.error)
    }

    func events(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Item 1: without a camera, `default` is an error that says how to use the test pattern; nothing is written.
    @Test func defaultIsNotTheTestPattern() throws {
        guard CaptureDevice.default(for: .video) == nil else { return }  // a machine with a camera takes the photo with it
        let scratch = try Scratch()
        let photo = try capture(["photo", "-o", "x.jpg"], in: scratch.path, album: scratch)
        #expect(photo.status == 69)
        #expect(photo.error.contains("no video capture device is available") && photo.error.contains("-i test-pattern"))
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.jpg")))
        try scratch.write("bare.pipeline", "input, name=camera, device=default\noutput, name=photo, kind=photo\nstart\ncapture-photo, output=photo\n")
        let bare = try capture(["run", "bare.pipeline", "--no-keys"], in: scratch.path, album: scratch)
        #expect(bare.status == 69 && bare.error.contains("fallback=test-pattern"))
        // make run's file falls back and says so.
        let run = try capture(
            ["run", packageRoot + "/Pipelines/default.pipeline", "--output-dir", "out", "--json", "--set", "preview.sink=none"], in: scratch.path,
            album: scratch)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.contains("input 'camera': no-device-available") && run.error.contains("using the fallback 'test-pattern'"))
        #expect(try tool(["identify", "-format", "%m", scratch.file("out/IMG_0002.jpg")]).output == "JPEG")
    }

    /// Item 6: outputs go to the current directory, never next to the file; an existing file is replaced
    /// only with overwrite=true.
    @Test func outputsGoToTheCurrentDirectoryAndAreReplacedOnlyWhenAsked() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.file("shipped"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.file("work"), withIntermediateDirectories: true)
        try scratch.write(
            "shipped/take.pipeline",
            """
            session, preset=vga640x480
            input, name=camera, device=test-pattern
            output, name=photo, kind=photo, location="shot.jpg"
            output, name=movie, kind=movie, location="clip.mp4", audio-codec=none
            start
            capture-photo, output=photo
            start-recording, output=movie
            wait, duration=1
            stop-recording, output=movie
            stop

            """)
        try scratch.write("work/shot.jpg", "a file the program did not write")
        try scratch.write("work/clip.mp4", "another one")
        // A plain location that is taken: the photo goes to the next free name, the movie is refused,
        // and neither file there is touched.
        let refused = try capture(["run", "../shipped/take.pipeline", "--no-keys"], in: scratch.file("work"), album: scratch)
        #expect(refused.status == 1)
        #expect(refused.error.contains("file-already-exists"))
        #expect(try String(contentsOfFile: scratch.file("work/shot.jpg"), encoding: .utf8) == "a file the program did not write")
        #expect(try String(contentsOfFile: scratch.file("work/clip.mp4"), encoding: .utf8) == "another one")
        #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("work/shot-1.jpg")]).output == "640x480 JPEG")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("shipped")) == ["take.pipeline"])
        // overwrite=true replaces them with what the run made.
        let replaced = try capture(
            ["run", "../shipped/take.pipeline", "--no-keys", "--set", "photo.overwrite=true", "--set", "movie.overwrite=true"], in: scratch.file("work"),
            album: scratch)
        #expect(replaced.status == 0, "\(replaced.error)")
        #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("work/shot.jpg")]).output == "640x480 JPEG")
        #expect(try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", scratch.file("work/clip.mp4")]).output == "h264\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("shipped")) == ["take.pipeline"])
        // --output-dir still says where they go.
        let elsewhere = try capture(["run", "../shipped/take.pipeline", "--no-keys", "--output-dir", "../out"], in: scratch.file("work"), album: scratch)
        #expect(elsewhere.status == 0, "\(elsewhere.error)")
        #expect(try tool(["identify", "-format", "%m", scratch.file("out/shot.jpg")]).output == "JPEG")
    }

    /// Item 4: recipe 9-7 with a missing microphone, as Pipelines/video-mode-switch.pipeline writes it.
    @Test func videoModeSwitchGoesOnInPhotoModeWithoutTheMicrophone() throws {
        let scratch = try Scratch()
        let run = try capture(
            ["run", packageRoot + "/Pipelines/video-mode-switch.pipeline", "--json", "--output-dir", "out", "--set", "preview.sink=none"], in: scratch.path,
            album: scratch)
        #expect(run.status == 0, "\(run.error)")
        let failed = events(run.output).filter { $0["event"] as? String == "action-failed" }
        #expect(failed.count == 1)
        #expect(failed.first?["action"] as? String == "add-input" && failed.first?["expected"] as? Bool == true)
        #expect(failed.first?["error"] as? String == "device-not-found")
        for name in ["mode_001.jpg", "mode_002.jpg", "mode_003.jpg"] {
            #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("out/" + name)]).output == "1280x720 JPEG")
        }
        #expect(
            try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", scratch.file("out/mode_002.mp4")]).output
                == "h264\naac\n")
    }

    /// Item 5: seed 003's library flow, Pipelines/library-flow.pipeline.
    @Test func libraryFlowPicksFromTheAlbum() throws {
        let scratch = try Scratch()
        let run = try capture(["run", packageRoot + "/Pipelines/library-flow.pipeline", "--json", "--output-dir", "out"], in: scratch.path, album: scratch)
        #expect(run.status == 0, "\(run.error)")
        let picks = events(run.output).filter { $0["event"] as? String == "library-item-picked" }
        #expect(picks.map { $0["name"] as? String } == ["picture", "clip", "named"])
        #expect(
            picks.map { $0["location"] as? String } == [
                scratch.file("Pictures/IMG_0001.jpg"), scratch.file("Videos/library-clip.mp4"), scratch.file("Videos/library-clip.mp4"),
            ])
        #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("out/picked-thumbnail.jpg")]).output == "640x480 JPEG")
        let duration = try tool(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", scratch.file("out/picked-trimmed.mp4")]).output
        #expect((1.4...1.6).contains(Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0), "\(duration)")
        // An empty album: the pick fails with library-item-not-found, naming the folder it looked in.
        let empty = try Scratch()
        try empty.write("pick.pipeline", "input, name=camera, device=test-pattern\nstart\npick-from-library, name=clip, kind=video\n")
        let none = try capture(["run", "pick.pipeline", "--no-keys"], in: empty.path, album: empty)
        #expect(none.status == 1)
        #expect(none.error.contains("library-item-not-found") && none.error.contains(empty.file("Videos")))
    }
}
