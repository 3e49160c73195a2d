import Capture
import CaptureTestSupport
import Foundation
import Testing

@Suite struct PipelineCommandTests {
    @Test func runReportsJSONEventsAndPassesExpectations() throws {
        let scratch = try Scratch()
        try scratch.write(
            "shot.pipeline",
            """
            session, preset=vga640x480
            input, name=camera, device=test-pattern
            output, name=photo, kind=photo, location="shot_%d.jpg"
            start
            capture-photo, output=photo
            wait, event=photo-saved
            stop
            expect, event=photo-saved, count=1
            """)
        let result = try capture(["run", scratch.file("shot.pipeline"), "--json"], in: scratch.path)
        #expect(result.status == 0, "\(result.error)")
        let events = result.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.count == result.output.split(separator: "\n").count, "every stdout line is one JSON object")
        let names = events.compactMap { $0["event"] as? String }
        #expect(names.starts(with: ["session-started"]))
        #expect(names.contains("photo-captured") && names.contains("photo-saved") && names.contains("session-stopped"))
        #expect(events.allSatisfy { $0["time"] is Double || $0["time"] is Int })
        let saved = try #require(events.first { $0["event"] as? String == "photo-saved" })
        #expect(saved["width"] as? Int == 640)
        #expect(try tool(["identify", "-format", "%w", scratch.file("shot_1.jpg")]).output == "640")
    }

    @Test func failedExpectationExits1AndNamesIt() throws {
        let scratch = try Scratch()
        try scratch.write(
            "fail.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            start
            wait, duration=0.2
            stop
            expect, event=photo-saved, count=3
            """)
        let result = try capture(["run", scratch.file("fail.pipeline")], in: scratch.path)
        #expect(result.status == 1)
        #expect(result.error.contains("expect, event=photo-saved, count=3"))
    }

    @Test func invalidFilesExit65WithLocatedDiagnostics() throws {
        let scratch = try Scratch()
        try scratch.write(
            "bad.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=p, kind=photo, quality=500
            output, name=p, kind=preview
            """)
        for command in ["run", "validate", "compile"] {
            let result = try capture([command, scratch.file("bad.pipeline")])
            #expect(result.status == 65, "\(command)")
            #expect(result.error.contains("bad.pipeline:2:"), "\(command): \(result.error)")
            #expect(result.error.contains("bad.pipeline:3:"), "\(command): all errors are reported")
            #expect(result.error.contains("^"))
        }
    }

    @Test func missingDeviceExits69() throws {
        let scratch = try Scratch()
        try scratch.write(
            "nodev.pipeline",
            """
            input, name=camera, device=/dev/video42
            output, name=preview, kind=preview, sink=none
            """)
        let result = try capture(["run", scratch.file("nodev.pipeline"), "--duration", "1"], in: scratch.path)
        #expect(result.status == 69, "\(result.error)")
        #expect(result.error.contains("capture devices"))
    }

    @Test func sigintStopsGracefully() async throws {
        let scratch = try Scratch()
        try scratch.write(
            "forever.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            """)
        let child = try ChildProcess([captureBinary, "run", scratch.file("forever.pipeline"), "--json"])
        let output = child.collectOutput()
        #expect(await output.wait(timeout: .seconds(30)) { $0.contains { $0.contains("\"session-started\"") } })
        child.signal(SIGINT)
        #expect(child.wait().status == 0)
        #expect(await output.wait { $0.contains { $0.contains("\"session-stopped\"") } })
    }

    @Test func validateChecksElementsWithoutDevices() throws {
        let result = try capture(
            ["validate"] + ["default.pipeline", "take-picture.pipeline", "scenarios/live-reconfiguration.pipeline"].map { packageRoot + "/Pipelines/" + $0 })
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.split(separator: "\n").count == 3)
    }

    @Test func compilePrintsARunnableGstLaunchLineAndDrawsTheGraph() throws {
        let scratch = try Scratch()
        try scratch.write(
            "c.pipeline",
            """
            session, preset=cif352x288
            input, name=camera, device=test-pattern, pattern=ball
            output, name=preview, kind=preview, sink=none
            """)
        let result = try capture(["compile", scratch.file("c.pipeline"), "--dot", scratch.file("g.dot"), "--png", scratch.file("g.png")])
        #expect(result.status == 0, "\(result.error)")
        let line = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("gst-launch-1.0 -e videotestsrc name=camera_source is-live=true pattern=ball"))
        let limited = line.replacingOccurrences(of: "is-live=true", with: "is-live=true num-buffers=5")
        let launched = try tool(["sh", "-c", "timeout 20 " + limited])
        #expect(launched.status == 0, "\(launched.output)")
        #expect(try String(contentsOfFile: scratch.file("g.dot"), encoding: .utf8).contains("digraph"))
        #expect(try tool(["identify", "-format", "%m", scratch.file("g.png")]).output == "PNG")
    }
}

/// `capture compile` prints what runs: the movie branch as it runs while recording, the photo encoder.
@Suite struct CompileOutputTests {
    @Test func theRecordingLineRecordsAndThePhotoEncoderIsShown() throws {
        let scratch = try Scratch()
        try scratch.write(
            "r.pipeline",
            """
            session, preset=cif352x288
            input, name=camera, device=test-pattern
            input, name=mic, device=test-tone
            output, name=photo, kind=photo, codec=jpeg, quality=80
            output, name=movie, kind=movie, location="\(scratch.file("clip_%02d.mp4"))"
            output, name=later, kind=movie
            """)
        let result = try capture(["compile", scratch.file("r.pipeline")])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        // The session while idle has no movie branch; the line after the '#' line has it, with the next
        // free name of the pattern.
        #expect(lines.count == 7, "\(lines)")
        guard lines.count == 7 else { return }
        #expect(lines[0].hasPrefix("gst-launch-1.0 -e ") && !lines[0].contains("mp4mux"))
        #expect(lines[1].hasPrefix("# While movie output 'movie' records"))
        #expect(lines[2].contains("mp4mux name=movie_mux") && lines[2].contains("x264enc") && lines[2].contains("voaacenc"))
        #expect(lines[3] == "# Movie output 'later' has no location: its branch is compiled when start-recording names one.")
        #expect(lines[4].hasPrefix("# Photo output 'photo' encodes each shot"))
        #expect(
            lines[5].contains("appsrc name=source") && lines[5].contains("jpegenc name=encoder_jpeg quality=80") && lines[5].contains("width=352,height=288"))
        #expect(lines[6].hasPrefix("# H.264 encoder: x264enc; automatic choice on this machine: "))
        // gst-launch-1.0 runs the recording line as printed (bounded) and the file has both streams.
        let bounded = lines[2].replacingOccurrences(of: "is-live=true", with: "is-live=true num-buffers=30")
        let launched = try tool(["sh", "-c", "timeout 30 " + bounded])
        #expect(launched.status == 0, "\(launched.output)")
        let probe = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", scratch.file("clip_01.mp4")])
        #expect(probe.output.split(separator: "\n").sorted() == ["aac", "h264"], "\(probe.output)")
        // Nothing was written by compile itself.
        #expect(!FileManager.default.fileExists(atPath: scratch.file("clip_02.mp4")))
    }
}

/// The camera manager's fallbacks, in `.pipeline` files: a preset the inputs cannot serve falls back to
/// `fallback-preset`, and a device that cannot be used (missing, busy, not allowed) to `fallback=`; both
/// say so on stderr, and a fallback that cannot work is refused before anything runs.
@Suite struct FallbackTests {
    @Test func aPresetFallsBackAndADeviceFallsBack() throws {
        let scratch = try Scratch()
        try scratch.write(
            "fallbacks.pipeline",
            """
            session, preset=hd1920x1080, fallback-preset=vga640x480
            input, name=camera, device=file:\(packageRoot)/Pipelines/media/codes.mp4
            input, name=mic, device=/dev/snd/no-such-microphone, media=audio, fallback=test-tone
            output, name=photo, kind=photo, location="p_%d.jpg"
            start
            capture-photo, output=photo
            wait, event=photo-saved
            stop
            expect, event=photo-saved, count=1
            """)
        let result = try capture(["run", scratch.file("fallbacks.pipeline"), "--output-dir", scratch.path], in: scratch.path)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.error.contains("cannot serve preset hd1920x1080: using fallback-preset vga640x480"), "\(result.error)")
        #expect(result.error.contains("input 'mic'") && result.error.contains("using the fallback 'test-tone'"), "\(result.error)")
        #expect(try tool(["identify", "-format", "%wx%h", scratch.file("p_1.jpg")]).output == "640x480")
        // Without the fallback preset the session is refused, naming the preset and the input.
        try scratch.write(
            "nofallback.pipeline",
            "session, preset=hd1920x1080\ninput, name=camera, device=file:\(packageRoot)/Pipelines/media/codes.mp4\noutput, name=p, kind=preview, sink=none\n")
        let refused = try capture(["run", scratch.file("nofallback.pipeline"), "--duration", "1"], in: scratch.path)
        #expect(refused.status != 0 && refused.error.contains("preset-not-supported"), "\(refused.error)")
    }

    @Test func fallbacksThatCannotWorkAreRefused() throws {
        let scratch = try Scratch()
        try scratch.write(
            "bad.pipeline",
            """
            session, fallback-preset=high
            input, name=mic, device=test-tone, fallback=test-pattern
            input, name=camera, device=test-pattern, fallback=test-pattern
            """)
        let result = try capture(["validate", scratch.file("bad.pipeline")])
        #expect(result.status == 65)
        #expect(result.error.contains("bad.pipeline:1:10: error: fallback-preset is used when the inputs cannot serve preset="), "\(result.error)")
        #expect(result.error.contains("bad.pipeline:2:36: error: the fallback 'test-pattern' captures video, not audio like the device"), "\(result.error)")
        #expect(result.error.contains("bad.pipeline:3:42: error: the fallback is the device itself"), "\(result.error)")
    }
}
