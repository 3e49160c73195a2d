import CaptureTestSupport
import Foundation
import Testing

@Suite(.serialized) struct StreamCommandTests {
    @Test func servesAStreamThatFFprobeReadsAtTheAskedSize() throws {
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/live"
        let child = try ChildProcess([captureBinary, "stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--duration", "30", "--json"])
        // Bounded: ffprobe retries until the server answers (the release binary starts in well under a second).
        var probe = (status: Int32(1), output: "")
        for _ in 0..<20 {
            probe = try tool([
                "timeout", "20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url,
            ])
            if probe.status == 0 { break }
            usleep(250_000)
        }
        child.signal(SIGINT)
        let result = child.finish()
        #expect(probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,640,480")
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains { $0.contains("\"event\": \"stream-ready\"") && $0.contains(url) })
        #expect(lines.contains { $0.contains("\"event\": \"stream-client-connected\"") })
        #expect(result.error.contains("frames"))
    }

    /// ffmpeg (what ffplay, VLC, MediaMTX and Frigate read RTSP with) decodes every key frame of the
    /// served stream whole: one packet per key frame, nothing concealed. rtph264pay config-interval=-1
    /// put SPS/PPS before each IDR slice, and x264 (tune=zerolatency: a slice per thread on a machine of
    /// two cores or more) makes key frames of several slices, which ffmpeg then split into pictures of
    /// one slice each, half of each key frame concealed. GStreamer's own depayloader hid it. Read over
    /// TCP: UDP on a loaded machine may lose packets, which would be another failure.
    @Test func ffmpegDecodesEveryServedKeyFrameWhole() async throws {
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/live"
        let child = try ChildProcess([captureBinary, "stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--duration", "60", "--json"])
        let output = child.collectOutput()
        defer {
            child.signal(SIGINT)
            _ = child.wait()
        }
        try #require(await output.wait(timeout: .seconds(30)) { $0.contains { $0.contains("\"event\": \"stream-ready\"") } }, "\(output.text)")

        // Both read 5 s of the stream at once, each from the key frame it starts at.
        let decode = try ChildProcess([
            "timeout", "30", "ffmpeg", "-nostdin", "-nostats", "-v", "info", "-rtsp_transport", "tcp", "-i", url, "-t", "5", "-f", "null", "-",
        ])
        let probe = try ChildProcess([
            "timeout", "30", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-read_intervals", "%+5", "-select_streams", "v:0",
            "-show_entries", "packet=pts,flags", "-of", "csv=p=0", url,
        ])
        let decoded = decode.finish()
        let probed = probe.finish()

        #expect(decoded.status == 0, "\(decoded.error)")
        let problems = decoded.error.split(separator: "\n").filter {
            $0.contains("corrupt decoded frame") || $0.contains("concealing") || $0.contains("error while decoding")
        }
        #expect(problems.count == 0, "\(problems.prefix(6))")

        #expect(probed.status == 0, "\(probed.output) \(probed.error)")
        // "pts,flags" per packet; a key frame cut in two shows as two K packets of one time.
        let keyTimes = probed.output.split(separator: "\n").compactMap { line -> Substring? in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, fields[1].contains("K") else { return nil }
            return fields[0]
        }
        let split = Dictionary(grouping: keyTimes) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
        print("measured: ffmpeg \(problems.count) corrupt/concealed lines; ffprobe \(keyTimes.count) key packets, \(split.count) key frames in several")
        #expect(keyTimes.count >= 2, "\(probed.output)")
        #expect(split.isEmpty, "key frames in several packets at pts \(split.prefix(6))")
    }

    /// The audio of a served stream keeps time with its video. Its buffers were all pushed at time 0
    /// (retimed by the video's offset from timestamps on another scale: x264enc's start at 1000 hours),
    /// so every RTP packet carried the same time: ffprobe read the audio at 0 s after 3 s of video, and
    /// ffmpeg -t never ended.
    @Test(arguments: ["aac", "opus"]) func servedAudioKeepsTimeWithTheVideo(_ codec: String) async throws {
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/av"
        let child = try ChildProcess([
            captureBinary, "stream", "-i", "test-pattern", "--audio", "test-tone", "--audio-codec", codec, "--serve", url, "--size", "352x288",
            "--duration", "60", "--json",
        ])
        let output = child.collectOutput()
        defer {
            child.signal(SIGINT)
            _ = child.wait()
        }
        try #require(await output.wait(timeout: .seconds(30)) { $0.contains { $0.contains("\"event\": \"stream-ready\"") } }, "\(output.text)")
        let probe = try ChildProcess([
            "timeout", "30", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-read_intervals", "%+3", "-show_entries",
            "packet=stream_index,pts_time", "-of", "csv=p=0", url,
        ]).finish()
        #expect(probe.status == 0, "\(probe.error)")
        // "stream,pts_time" per packet: the last time of each stream (0 video, 1 audio).
        var last: [Substring: Double] = [:]
        for line in probe.output.split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count >= 2, let time = Double(fields[1]) { last[fields[0]] = max(last[fields[0]] ?? 0, time) }
        }
        let video = last["0"] ?? 0
        let audio = last["1"] ?? 0
        print("measured: \(codec) served, ffprobe read video to \(video) s, audio to \(audio) s")
        #expect(video >= 2, "\(probe.output.prefix(400))")
        #expect(abs(audio - video) < 0.5, "audio to \(audio) s, video to \(video) s")
    }

    /// `--record`: the same picture recorded while it is served, from the stream's encoder.
    @Test func recordsWhatItServes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-stream-record-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/clip.mp4"
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/live"
        let result = try capture(["stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--record", file, "--duration", "3", "--json"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("\"event\": \"recording-finished\"") && result.output.contains("\"success\": true"), "\(result.output)")
        let probe = try tool([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height,nb_read_frames",
            "-of", "csv=p=0", file,
        ])
        let fields = probe.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        #expect(fields.prefix(3).joined(separator: ",") == "h264,640,480", "\(probe.output)")
        #expect((fields.last.flatMap { Int($0) } ?? 0) >= 60, "\(probe.output)")
        // An existing file is never overwritten.
        let again = try capture(["stream", "-i", "test-pattern", "--serve", url, "--record", file, "--duration", "1"])
        #expect(again.status != 0 && again.error.contains("clip.mp4"), "\(again.error)")
    }

    @Test(arguments: [
        (["stream", "-i", "test-pattern"], Int32(64), "--serve URL or --publish URL is required"),
        (["stream", "--serve", "rtsp://127.0.0.1:8554/a", "--publish", "srt://127.0.0.1:9000"], 64, "exclude each other"),
        (["stream", "--serve", "rtsp://127.0.0.1:8554/a", "--audio-codec", "mp3", "--audio", "test-tone"], 64, "aac or opus"),
        (["stream", "-i", "test-pattern", "--serve", "rtsp://127.0.0.1:8554/$(reboot)"], 65, "the path may hold only"),
        (["stream", "-i", "test-pattern", "--publish", "srt://127.0.0.1:9000?mode=rendezvous"], 65, "mode must be caller or listener"),
        (["stream", "-i", "test-pattern", "--serve", "srt://127.0.0.1:9000"], 65, "serve= takes an rtsp:// URL"),
    ])
    func refusesWhatItCannotUse(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let result = try capture(arguments)
        #expect(result.status == status)
        #expect(result.error.contains(message), "\(result.error)")
    }
}
