import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// Records every event of a session, for waits on counts (bounded in time).
final class EventRecorder: Sendable {
    let seen = Locked<[SessionEvent]>([])
    private let task: Task<Void, Never>

    init(_ session: CaptureSession) {
        let stream = session.events()
        let seen = self.seen
        task = Task { for await event in stream { seen.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    func count(_ name: String) -> Int { seen.withLock { $0.filter { $0.name == name }.count } }
    var names: [String] { seen.withLock { $0.map(\.name) } }

    /// Waits until `count` events named `name` were posted; false when `timeout` passed first.
    func wait(for name: String, count: Int = 1, timeout: Duration = .seconds(20)) async -> Bool {
        await waitUntil(timeout: timeout) { self.count(name) >= count }
    }
}

/// The repository's `scripts/` folder.
let scriptsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("scripts").path

/// What ffprobe reads of a stream or file: "codec,width,height" per video stream, and the frames it decoded.
func probeVideo(_ url: String, countFrames: Bool = false) throws -> (summary: String, frames: Int?) {
    var arguments = [
        "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height" + (countFrames ? ",nb_read_frames" : ""),
        "-of", "csv=p=0",
    ]
    if countFrames { arguments.insert("-count_frames", at: 3) }
    if url.hasPrefix("rtsp://") { arguments += ["-rtsp_transport", "tcp"] }
    // Standard output only: a file cut by killing its receiver may end in a frame ffprobe reports as broken.
    let result = try ChildProcess(["timeout", "20"] + arguments + [url]).finish()
    let line = result.output.split(separator: "\n").first.map(String.init) ?? ""
    let parts = line.split(separator: ",")
    let frames = countFrames && parts.count == 4 ? Int(parts[3]) : nil
    return (parts.prefix(3).joined(separator: ","), frames)
}

@Suite struct StreamURLTests {
    @Test(arguments: [
        ("rtsp://127.0.0.1:8554/live", "rtsp://127.0.0.1:8554/live"),
        ("rtsp://camera-1.local/cams/front", "rtsp://camera-1.local:554/cams/front"),
        ("rtsp://user:secret@10.0.0.2:8554/in", "rtsp://user:***@10.0.0.2:8554/in"),
        ("rtsp://[::1]:8554/live", "rtsp://[::1]:8554/live"),
        ("srt://127.0.0.1:9000", "srt://127.0.0.1:9000?mode=caller"),
        ("srt://:9000?mode=listener&latency=120", "srt://:9000?mode=listener&latency=120"),
        ("srt://mediamtx:8890?streamid=publish:cam1&passphrase=abcdefghij", "srt://mediamtx:8890?mode=caller&streamid=publish:cam1&passphrase=***"),
    ])
    func acceptedURLs(_ text: String, _ shown: String) throws {
        #expect(try StreamURL(text).description == shown)
    }

    @Test(arguments: [
        ("http://127.0.0.1/live", "scheme"),
        ("rtsp://127.0.0.1:8554", "path"),
        ("rtsp://127.0.0.1:8554/", "path"),
        ("rtsp://127.0.0.1:70000/live", "port"),
        ("rtsp://127.0.0.1:0/live", "port"),
        ("rtsp://127.0.0.1:8554/a/../b", "path"),
        ("rtsp://127.0.0.1:8554/a b", "spaces"),
        ("rtsp://127.0.0.1:8554/a;rm", "path"),
        ("rtsp://127.0.0.1:8554/live?x=1", "query"),
        ("rtsp://host_name:8554/live", "host"),
        ("rtsp://-bad:8554/live", "host"),
        ("rtsp://127.0.0.1:8554/live#frag", "fragment"),
        ("srt://127.0.0.1", "port"),
        ("srt://127.0.0.1:9000/path", "path"),
        ("srt://127.0.0.1:9000?mode=rendezvous", "mode"),
        ("srt://127.0.0.1:9000?latency=fast", "latency"),
        ("srt://127.0.0.1:9000?cmd=x", "not an SRT option"),
        ("srt://127.0.0.1:9000?passphrase=short", "passphrase"),
        ("srt://:9000", "caller needs a host"),
        ("srt://u@127.0.0.1:9000", "user name"),
    ])
    func refusedURLs(_ text: String, _ reason: String) {
        #expect {
            _ = try StreamURL(text)
        } throws: { error in
            guard let error = error as? CaptureError, case .invalidStreamUrl(_, let why) = error else { return false }
            return error.name == "invalid-stream-url" && why.contains(reason)
        }
    }

    @Test func servingTakesRTSPWithoutCredentials() {
        #expect(throws: CaptureError.self) { try StreamDestination.serving("srt://127.0.0.1:9000") }
        #expect(throws: CaptureError.self) { try StreamDestination.serving("rtsp://a:b@127.0.0.1:8554/live") }
        #expect(throws: Never.self) { try StreamDestination.serving("rtsp://0.0.0.0:8554/live") }
    }

    @Test func passwordsStayOutOfErrors() {
        do {
            _ = try StreamURL("rtsp://user:hunter2@127.0.0.1:8554/a b")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }
}

@Suite(.serialized) struct StreamOutputTests {
    func session(size: Size = Size(width: 352, height: 288), audio: Bool = false) throws -> CaptureSession {
        let session = CaptureSession(name: "stream-test")
        try session.addInput(CaptureDeviceInput(deviceID: "test-pattern"))
        if audio { try session.addInput(CaptureDeviceInput(deviceID: "test-tone")) }
        try session.setSessionPreset(SessionPreset.serving(size))
        return session
    }

    @Test func servedStreamIsReadByTwoDecodingClientsAtOnce() async throws {
        let port = freeLoopbackPort()
        let url = "rtsp://127.0.0.1:\(port)/live"
        let session = try session(size: Size(width: 640, height: 480))
        let stream = try CaptureStreamOutput(name: "live", serve: url)
        try session.addOutput(stream)
        let events = EventRecorder(session)
        try await session.startRunning()
        #expect(stream.servedURL == url)
        #expect(await events.wait(for: "stream-ready"))
        #expect(try probeVideo(url).summary == "h264,640,480")

        // Two decoding clients at once, 5 s each (UDP and TCP transport), checked by ffmpeg's exit status and its error lines.
        let clients = try ["udp", "tcp"].map { transport in
            try ChildProcess([
                "timeout", "30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", url,
                "-t", "5", "-fps_mode", "passthrough", "-f", "null", "-",
            ])
        }
        let results = clients.map { $0.finish() }
        for result in results {
            #expect(result.status == 0, "\(result.error)")
            // The null muxer's note about equal timestamps is not a decoding error; anything else is.
            let problems = result.error.split(separator: "\n").filter {
                !$0.contains("non monotonically increasing dts") && !$0.contains("Last message repeated")
            }
            #expect(problems.isEmpty, "\(problems)")
        }
        #expect(await events.wait(for: "stream-client-connected", count: 3))
        await session.stopRunning()
        // The server is gone with the session: nothing listens on the port any more.
        #expect(try run(["timeout", "10", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", url]).status != 0)
    }

    /// A session stopped while clients read: the server closes them, and their "closed" signals, which
    /// GStreamer's RTSP server emits on its client threads (not the server's), possibly after the
    /// server is gone, find a stopped server instead of freed memory. Three rounds on one port.
    @Test func stoppingWhileClientsReadIsSafe() async throws {
        let port = freeLoopbackPort()
        let url = "rtsp://127.0.0.1:\(port)/live"
        for round in 0..<3 {
            let session = try session()
            try session.addOutput(try CaptureStreamOutput(name: "live", serve: url))
            let events = EventRecorder(session)
            try await session.startRunning()
            let readers = try ["tcp", "udp"].map { transport in
                try ChildProcess(
                    [
                        "timeout", "30", "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", transport, "-i", url,
                        "-f", "null", "-",
                    ], discardOutput: true)
            }
            #expect(await events.wait(for: "stream-client-connected", count: 2), "round \(round)")
            await session.stopRunning()
            // The readers lose the server: they end (the timeout is a bound, not the expected way out).
            for reader in readers { #expect(reader.wait().status != 124, "round \(round)") }
        }
    }

    /// A stream and a recording of the same picture share one H.264 encode: the stream can leave while
    /// the recording goes on in the same file, and the encoder leaves with its last reader.
    @Test func aRecordingAndAStreamOfTheSamePictureShareOneEncoder() async throws {
        let folder = try TemporaryDirectory()
        let port = freeLoopbackPort()
        let url = "rtsp://127.0.0.1:\(port)/live"
        let session = try session()
        let stream = try CaptureStreamOutput(name: "live", serve: url)
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(stream)
        try session.addOutput(movie)
        let events = EventRecorder(session)
        try await session.startRunning()
        func encoders() -> Int { session.runningElementFactories.filter { $0 == "x264enc" }.count }
        #expect(encoders() == 1)
        try await movie.startRecording(to: folder.path("shared.mp4"))
        #expect(encoders() == 1)
        #expect(await movie.waitUntilRecorded(.seconds(2)))
        // The stream is read while the recording goes on.
        #expect(try probeVideo(url).summary == "h264,352,288")

        // The stream leaves; the recording keeps reading its encoder.
        session.beginConfiguration()
        try session.removeOutput(stream)
        try await session.commitConfiguration()
        #expect(movie.isRecording && encoders() == 1)
        #expect(await movie.waitUntilRecorded(movie.recordedDuration + .seconds(2)))
        let result = try await movie.stopRecording()
        #expect(encoders() == 0)
        await session.stopRunning()

        #expect(result.success)
        #expect(!events.names.contains("runtime-error"))
        let file = try probeVideo(folder.path("shared.mp4"), countFrames: true)
        #expect(file.summary == "h264,352,288")
        // Every frame of the recording's time, across the stream's departure (30 fps).
        let expected = Int(result.duration.seconds * 30)
        print("measured: shared-encoder recording \(result.duration.seconds) s, \(file.frames ?? 0) frames (expected about \(expected))")
        #expect((file.frames ?? 0) >= expected - 2)
        // It starts at a key frame and decodes without an error.
        let first = try run([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=key_frame", "-read_intervals", "%+#1", "-of", "csv=p=0",
            folder.path("shared.mp4"),
        ])
        #expect(first.output.split(separator: ",").first == "1", "\(first.output)")
        let decode = try ChildProcess(["timeout", "60", "ffmpeg", "-nostdin", "-v", "error", "-i", folder.path("shared.mp4"), "-f", "null", "-"]).finish()
        #expect(decode.status == 0 && decode.error.isEmpty, "\(decode.error)")
    }

    /// A recording that reads a stream's encoder ends with every frame captured before it was
    /// stopped, though those frames were still in the encoder when the stop was asked for.
    @Test func aSharedRecordingEndsWithTheFramesCapturedBeforeItsStop() async throws {
        let folder = try TemporaryDirectory()
        let session = try session()
        try session.addOutput(try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:\(freeLoopbackPort())/live"))
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(movie)
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        try await session.startRunning()
        #expect(session.runningElementFactories.filter { $0 == "x264enc" }.count == 1)
        let latest = Locked<Double>(0)
        let delivered = frames.frames()
        let reader = Task { for await frame in delivered { latest.value = frame.timestamp } }
        try await movie.startRecording(to: folder.path("end.mp4"))
        #expect(await movie.waitUntilRecorded(.seconds(1.5)))
        // A frame the application has seen was captured before the stop.
        let seen = latest.value
        let result = try await movie.stopRecording()
        reader.cancel()
        await session.stopRunning()
        #expect(result.success)
        // The last frame in the file, read by ffprobe (file time from 0 at the first frame), on the
        // session's running time.
        let packets = try run([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", folder.path("end.mp4"),
        ])
        let last = try #require(packets.output.split(whereSeparator: \.isNewline).compactMap { Double($0) }.max())
        let end = try #require(result.firstTimestamp) + last
        print("measured: shared recording's last frame at \(end) s; last frame seen before the stop \(seen) s")
        #expect(end > seen - 0.005, "the recording's last frame is at \(end) s, before the frame at \(seen) s")
    }

    /// A recording that pauses while it reads a stream's encoder goes on at a key frame: the file
    /// decodes without an error and holds the time before and after the pause.
    @Test func aPausedRecordingOfASharedEncoderResumesAtAKeyFrame() async throws {
        let folder = try TemporaryDirectory()
        let session = try session()
        try session.addOutput(try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:\(freeLoopbackPort())/live"))
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(movie)
        try await session.startRunning()
        try await movie.startRecording(to: folder.path("paused.mp4"))
        #expect(session.runningElementFactories.filter { $0 == "x264enc" }.count == 1)
        #expect(await movie.waitUntilRecorded(.seconds(1.5)))
        try movie.pauseRecording()
        // 1.5 s of frames (45) captured during the pause reach the gate and are left out.
        #expect(await waitUntil { movie.videoFramesDroppedWhilePaused >= 45 })
        try movie.resumeRecording()
        #expect(await movie.waitUntilRecorded(movie.recordedDuration + .seconds(1.5)))
        let result = try await movie.stopRecording()
        await session.stopRunning()
        #expect(result.success)
        let decode = try ChildProcess(["timeout", "60", "ffmpeg", "-nostdin", "-v", "error", "-i", folder.path("paused.mp4"), "-f", "null", "-"]).finish()
        #expect(decode.status == 0 && decode.error.isEmpty, "\(decode.error)")
        let file = try probeVideo(folder.path("paused.mp4"), countFrames: true)
        print("measured: paused shared recording \(result.duration.seconds) s, \(file.frames ?? 0) frames")
        // About 3 s recorded (the pause left out); a resume waits at most for the key frame it asks for.
        #expect(result.duration.seconds > 2.4 && result.duration.seconds < 3.6)
        #expect((file.frames ?? 0) >= Int(result.duration.seconds * 30) - 2)
    }

    /// Who shares: the same picture only (size, encoder, key frames often enough, bit rate when the
    /// movie names one, no overlay of the movie's own), as `capture compile` shows it.
    @Test func onlyTheSamePictureSharesAnEncoder() throws {
        func encoders(movie configure: (CaptureMovieFileOutput) throws -> Void) throws -> (count: Int, shared: Bool) {
            let session = try session()
            try session.addOutput(try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:8554/live"))
            let movie = CaptureMovieFileOutput(name: "movie")
            movie.settings.location = "/tmp/never-written.mp4"
            try configure(movie)
            try session.addOutput(movie)
            let graph = try #require(try session.compilePipelines().whileRecording)
            let movieBranch = try #require(graph.branches.first { $0.output == "movie" })
            return (graph.branches.flatMap(\.allElements).filter { $0.factory == "x264enc" }.count, !movieBranch.reads.isEmpty)
        }
        let same = try encoders { _ in }
        #expect(same.shared && same.count == 1)
        let smaller = try encoders { $0.settings.size = Size(width: 176, height: 144) }
        #expect(!smaller.shared && smaller.count == 2)
        // The stream makes a key frame every second: enough for fragments of 4 s, not of half a second.
        let longerFragments = try encoders { $0.settings.movieFragmentInterval = .seconds(4) }
        #expect(longerFragments.shared && longerFragments.count == 1)
        let shorterFragments = try encoders { $0.settings.movieFragmentInterval = .milliseconds(500) }
        #expect(!shorterFragments.shared && shorterFragments.count == 2)
        let otherRate = try encoders { $0.settings.bitRate = 123_000 }
        #expect(!otherRate.shared && otherRate.count == 2)
        let overlaid = try encoders { try $0.addOverlay(CaptureOverlay(name: "rec", content: .text("REC"))) }
        #expect(!overlaid.shared && overlaid.count == 2)
        let vp8 = try encoders { $0.settings.location = "/tmp/never-written.webm" }
        #expect(!vp8.shared && vp8.count == 1)
    }

    @Test func servedStreamCarriesAudioWhenAsked() async throws {
        let port = freeLoopbackPort()
        let url = "rtsp://127.0.0.1:\(port)/av"
        let session = try session(audio: true)
        try session.addOutput(try CaptureStreamOutput(name: "av", serve: url, settings: StreamSettings(audioCodec: .opus)))
        try await session.startRunning()
        let result = try run(["timeout", "20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=codec_name", "-of", "csv=p=0", url])
        await session.stopRunning()
        #expect(result.output.split(separator: "\n").sorted() == ["h264", "opus"])
    }

    @Test func aTakenPortOrPathFailsTheStartWithATypedError() async throws {
        let port = freeLoopbackPort()
        let first = try session()
        try first.addOutput(try CaptureStreamOutput(name: "a", serve: "rtsp://127.0.0.1:\(port)/same"))
        try await first.startRunning()
        // Another path of the same port is served by the same server; the same path is refused.
        let second = try session()
        let other = try CaptureStreamOutput(name: "b", serve: "rtsp://127.0.0.1:\(port)/other")
        try second.addOutput(other)
        try await second.startRunning()
        #expect(try probeVideo("rtsp://127.0.0.1:\(port)/other").summary == "h264,352,288")
        await second.stopRunning()
        let third = try session()
        try third.addOutput(try CaptureStreamOutput(name: "c", serve: "rtsp://127.0.0.1:\(port)/same"))
        await #expect(throws: CaptureError.self) { try await third.startRunning() }
        await first.stopRunning()

        // A port another program holds.
        let holder = try ChildProcess([
            "/usr/bin/python3", "-c",
            "import socket,time; s=socket.socket(); s.bind(('127.0.0.1', \(port))); s.listen(); print('ok', flush=True); time.sleep(30)",
        ])
        #expect(await waitUntil { isListening(port) })
        let fourth = try session()
        try fourth.addOutput(try CaptureStreamOutput(name: "d", serve: "rtsp://127.0.0.1:\(port)/live"))
        do {
            try await fourth.startRunning()
            Issue.record("started on a taken port")
            await fourth.stopRunning()
        } catch {
            #expect(error.name == "stream-server-failed")
        }
        holder.signal(SIGKILL)
        _ = holder.wait()
    }

    @Test func streamJoinsAndLeavesARunningSessionLive() async throws {
        let port = freeLoopbackPort()
        let url = "rtsp://127.0.0.1:\(port)/live"
        let session = try session()
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        try await session.startRunning()
        session.beginConfiguration()
        let stream = try CaptureStreamOutput(name: "live", serve: url)
        try session.addOutput(stream)
        try await session.commitConfiguration()
        #expect(try probeVideo(url).summary == "h264,352,288")
        session.beginConfiguration()
        try session.removeOutput(stream)
        try await session.commitConfiguration()
        #expect(session.isRunning)
        #expect(try run(["timeout", "10", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", url]).status != 0)
        await session.stopRunning()
    }

    /// Publishing over RTSP to a receiver that is killed mid-stream and started again: the stream
    /// resumes, and a recording made at the same time is untouched.
    @Test func rtspPublishingSurvivesTheServerGoingAwayAndTheRecordingIsUntouched() async throws {
        let folder = try TemporaryDirectory()
        let port = freeLoopbackPort()
        let receiver = "\(scriptsFolder)/test-servers/rtsp-record-receiver.py"
        func startReceiver(_ file: String) async throws -> ChildProcess {
            let child = try ChildProcess([receiver, "\(port)", "/cam", folder.path(file)], discardOutput: true)
            #expect(await waitUntil { isListening(port) }, "the receiver listens on \(port)")
            return child
        }
        var first: ChildProcess? = try await startReceiver("first.ts")
        let session = try session()
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(movie)
        try session.addOutput(try CaptureStreamOutput(name: "up", publish: "rtsp://127.0.0.1:\(port)/cam"))
        let events = EventRecorder(session)
        try await session.startRunning()
        try await movie.startRecording(to: folder.path("local.mp4"))
        #expect(await events.wait(for: "stream-connected"))
        // The receiver has written what it received (more than a few frames) before it is killed.
        #expect(await fileGrows(folder.path("first.ts"), to: 100_000))
        first?.signal(SIGKILL)
        _ = first?.wait()
        first = nil
        #expect(await events.wait(for: "stream-disconnected"))
        let second = try await startReceiver("second.ts")
        #expect(await events.wait(for: "stream-connected", count: 2, timeout: .seconds(40)))
        #expect(await fileGrows(folder.path("second.ts"), to: 100_000))
        let result = try await movie.stopRecording()
        await session.stopRunning()
        second.signal(SIGTERM)
        _ = second.wait()

        #expect(result.success)
        #expect(!events.names.contains("runtime-error") && !events.names.contains("interrupted"))
        // The recording holds the whole time, the server's absence included.
        let local = try probeVideo(folder.path("local.mp4"), countFrames: true)
        #expect(local.summary == "h264,352,288")
        #expect((local.frames ?? 0) >= Int(result.duration.seconds * 30) - 2)
        for file in ["first.ts", "second.ts"] {
            let received = try probeVideo(folder.path(file), countFrames: true)
            #expect(received.summary == "h264,352,288", "\(file)")
            #expect((received.frames ?? 0) > 10, "\(file)")
        }
    }

    /// Publishing over SRT (caller) to ffmpeg listening; the listener goes and comes back.
    @Test func srtPublishingResumesWhenTheListenerComesBack() async throws {
        let folder = try TemporaryDirectory()
        let port = freeLoopbackPort(udp: true)
        func listener(_ file: String) throws -> ChildProcess {
            try ChildProcess(
                [
                    "timeout", "60", "ffmpeg", "-nostdin", "-v", "error", "-analyzeduration", "1000000", "-i", "srt://127.0.0.1:\(port)?mode=listener",
                    "-c", "copy", "-f", "mpegts", "-y", folder.path(file),
                ], discardOutput: true)
        }
        let first = try listener("first.ts")
        #expect(await waitUntil { isUDPPortTaken(port) }, "ffmpeg listens on \(port)")
        let session = try session()
        try session.addOutput(try CaptureStreamOutput(name: "up", publish: "srt://127.0.0.1:\(port)"))
        let events = EventRecorder(session)
        try await session.startRunning()
        #expect(await events.wait(for: "stream-connected"))
        // ffmpeg writes once it has probed the stream: wait (bounded) for its file to hold a few seconds.
        #expect(await fileGrows(folder.path("first.ts"), to: 60_000))
        first.signal(SIGINT)
        _ = first.wait()
        #expect(await events.wait(for: "stream-disconnected"))
        let second = try listener("second.ts")
        #expect(await events.wait(for: "stream-connected", count: 2, timeout: .seconds(40)))
        #expect(await fileGrows(folder.path("second.ts"), to: 60_000))
        await session.stopRunning()
        second.signal(SIGINT)
        _ = second.wait()
        #expect(!events.names.contains("runtime-error"))
        for file in ["first.ts", "second.ts"] {
            let received = try probeVideo(folder.path(file), countFrames: true)
            #expect(received.summary == "h264,352,288", "\(file)")
            #expect((received.frames ?? 0) > 10, "\(file)")
        }
    }

    /// SRT in listener mode: the process waits, a receiver (ffmpeg as caller) dials in.
    @Test func srtListenerIsReadByACaller() async throws {
        let folder = try TemporaryDirectory()
        let port = freeLoopbackPort(udp: true)
        let session = try session()
        try session.addOutput(try CaptureStreamOutput(name: "up", publish: "srt://127.0.0.1:\(port)?mode=listener"))
        let events = EventRecorder(session)
        try await session.startRunning()
        #expect(await events.wait(for: "stream-ready"))
        let caller = try ChildProcess(
            [
                "timeout", "30", "ffmpeg", "-nostdin", "-v", "error", "-i", "srt://127.0.0.1:\(port)?mode=caller",
                "-t", "3", "-c", "copy", "-f", "mpegts", "-y", folder.path("caller.ts"),
            ], discardOutput: true)
        _ = caller.wait()
        #expect(await events.wait(for: "stream-client-connected"))
        await session.stopRunning()
        let received = try probeVideo(folder.path("caller.ts"), countFrames: true)
        #expect(received.summary == "h264,352,288")
        #expect((received.frames ?? 0) > 10)
    }
}

/// Waits until the file at `path` holds at least `size` bytes; false when `timeout` passed first.
func fileGrows(_ path: String, to size: Int, timeout: Duration = .seconds(30)) async -> Bool {
    await waitUntil(timeout: timeout, every: .milliseconds(50)) {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? 0) >= size
    }
}
