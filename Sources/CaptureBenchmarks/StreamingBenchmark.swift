import Capture
import CaptureMQTT
import CaptureTestSupport
import Foundation
import GStreamer

extension Benchmarks {
    /// `streaming`: `sessions` sessions in this process, each a 640x480 30 fps test pattern served over
    /// RTSP (one RTSP server, a path each) with one reader (ffmpeg over TCP, decoding) and its events
    /// published to a Mosquitto broker on 127.0.0.1 (read back by mosquitto_sub). Measured over
    /// `seconds` once every reader is connected: this process's CPU per stream, the frames the
    /// framework did not hand on (30 per second expected per stream), the bit rate per stream, and the
    /// events published against those the subscriber received.
    /// `pattern`: the test pattern's picture (`smpte`: still bars, the cheapest to encode; `ball`: a
    /// moving ball; `snow`: noise in every pixel, the dearest).
    static func streaming(sessions count: Int, seconds: Double, pattern: String = "smpte", log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        log("streaming: \(count) sessions serving RTSP at 640x480 (\(pattern)) with events over MQTT, \(Int(seconds)) s ...")
        let folder = NSTemporaryDirectory() + "capture-bench-streaming-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: folder)
        try broker.start()
        defer { broker.stop() }
        let (subscriber, received) = try broker.subscribe("bench/#")
        // The subscriber is listening once it has seen a marker.
        for _ in 0..<50 {
            try broker.publish("bench/ready", "1")
            if await received.wait(timeout: .milliseconds(200), until: { $0.contains("bench/ready 1") }) { break }
        }

        let port = freeLoopbackPort()
        var sessions: [CaptureSession] = []
        var streams: [CaptureStreamOutput] = []
        var publishers: [MQTTEventPublisher] = []
        let published = Locked(0)
        let publishedTopics = Locked<[String]>([])
        let lastEvent = Locked(ContinuousClock.now)
        for index in 0..<count {
            let session = CaptureSession(name: "bench-\(index)")
            try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(pattern: pattern)))
            try session.setSessionPreset(.vga640x480)
            let stream = try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:\(port)/cam\(index)")
            try session.addOutput(stream)
            let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/bench/cam\(index)")
            publisher.start()
            let start = ContinuousClock.now
            let events = session.events()
            Task {
                for await event in events {
                    published.withLock { $0 += 1 }
                    publishedTopics.withLock { $0.append("bench/cam\(index)/\(event.name)") }
                    lastEvent.value = .now
                    publisher.publish(event, since: start)
                }
            }
            try await session.startRunning()
            sessions.append(session)
            streams.append(stream)
            publishers.append(publisher)
        }
        var readers: [ChildProcess] = []
        for index in 0..<count {
            readers.append(
                try ChildProcess(
                    [
                        "ffmpeg", "-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", "rtsp://127.0.0.1:\(port)/cam\(index)",
                        "-f", "null", "-",
                    ], discardOutput: true))
        }
        // Bounded wait for every reader to play.
        for _ in 0..<400 where streams.contains(where: { $0.clientCount == 0 }) { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .seconds(2))

        let framesBefore = streams.map(\.sentFrameCount)
        let bytesBefore = streams.map(\.sentByteCount)
        let readersBefore = readers.map { $0.cpuSecondsSoFar ?? 0 }
        let cpuBefore = cpuSeconds(RUSAGE_SELF)
        let wallStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let wall = (ContinuousClock.now - wallStart).seconds
        let cpu = cpuSeconds(RUSAGE_SELF) - cpuBefore
        let sent = zip(streams.map(\.sentFrameCount), framesBefore).map { $0 - $1 }
        let bytes = zip(streams.map(\.sentByteCount), bytesBefore).map { $0 - $1 }
        let readersCPU = zip(readers.map { $0.cpuSecondsSoFar ?? 0 }, readersBefore).map { $0 - $1 }.reduce(0, +)
        let clients = streams.map(\.clientCount)

        for reader in readers { reader.signal(SIGINT) }
        for reader in readers { _ = await reader.ended() }
        for session in sessions { await session.stopRunning() }
        // The last events of the stops reach their publishers: every session-stopped, then quiet for
        // 300 ms (bounded: 5 s).
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline,
            publishedTopics.value.filter({ $0.hasSuffix("/session-stopped") }).count < count || ContinuousClock.now - lastEvent.value < .milliseconds(300)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        for publisher in publishers { await publisher.stop() }
        // Every event published reaches the subscriber (bounded wait for the last ones).
        let expectedEvents = published.value
        func eventLines() -> Int {
            received.lines.filter { line in
                guard line.hasPrefix("bench/cam"), let topic = line.split(separator: " ").first else { return false }
                let leaf = topic.split(separator: "/").last ?? ""
                return leaf != "available" && leaf != "reply" && leaf != "command"
            }.count
        }
        _ = await received.wait(timeout: .seconds(10)) { _ in eventLines() >= expectedEvents }
        let delivered = eventLines()
        var missingTopics = publishedTopics.value
        for line in received.lines {
            if let topic = line.split(separator: " ").first, let at = missingTopics.firstIndex(of: String(topic)) { missingTopics.remove(at: at) }
        }
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()

        let expectedFrames = 30 * wall
        let missing = sent.map { max(0, expectedFrames - Double($0)) }
        let perStreamCPU = cpu / wall / Double(count) * 100
        let bitRate = Double(bytes.reduce(0, +)) * 8 / wall / Double(count) / 1000
        let setting =
            "\(count) sessions x 640x480 30 fps test pattern '\(pattern)' served over RTSP, one ffmpeg reader each, events over MQTT; \(Int(wall.rounded())) s"
        return [
            BenchmarkResult(
                name: "streaming: CPU per stream (this process)", value: perStreamCPU, unit: "% of a core",
                note:
                    "\(setting); whole process \(String(format: "%.0f", cpu / wall * 100))% of a core, the \(count) readers \(String(format: "%.0f", readersCPU / wall * 100))%; \(ProcessInfo.processInfo.activeProcessorCount) cores"
            ),
            BenchmarkResult(
                name: "streaming: frames not handed on by the framework (all streams)", value: missing.reduce(0, +), unit: "frames",
                note:
                    "\(String(format: "%.0f", expectedFrames)) expected per stream; sent per stream \(sent.map(String.init).joined(separator: ", ")); clients \(clients.map(String.init).joined(separator: ", "))"
            ),
            BenchmarkResult(name: "streaming: video bit rate per stream", value: bitRate, unit: "kbit/s", note: "H.264 as encoded, before RTP/TCP overhead"),
            BenchmarkResult(
                name: "streaming: events delivered", value: Double(delivered), unit: "events", peer: "published", peerValue: Double(expectedEvents),
                note: "read back by mosquitto_sub" + (missingTopics.isEmpty ? "" : "; missing: \(missingTopics.joined(separator: ", "))")),
        ]
    }

    /// `streaming` (second part): a 640x480 30 fps session serving RTSP while it records the same
    /// picture, measured with the recording reading the stream's encoder (one encode) and, side by
    /// side in the same run, with the recording asking another bit rate, so that it encodes on its own
    /// (two encodes: what the stream and the recording cost without sharing). This process's CPU over
    /// `seconds` of recording each.
    static func sharedEncoder(seconds: Double, pattern: String, log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        log("streaming: a stream and a recording of the same 640x480 picture (\(pattern)), one encoder then two, \(Int(seconds)) s each ...")
        let folder = NSTemporaryDirectory() + "capture-bench-shared-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var measured: [(cpu: Double, encoders: Int, frames: Int)] = []
        for shared in [true, false] {
            let session = CaptureSession(name: "bench-shared")
            try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(pattern: pattern)))
            try session.setSessionPreset(.vga640x480)
            try session.addOutput(try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:\(freeLoopbackPort())/live"))
            let movie = CaptureMovieFileOutput(name: "movie")
            movie.settings.audioCodec = MovieAudioCodec.none
            // Another bit rate than the stream's (about 0.1 bit per pixel per frame): its own encoder.
            if !shared { movie.settings.bitRate = 900_000 }
            movie.settings.location = folder + "/movie-\(shared).mp4"
            try session.addOutput(movie)
            let graph = try session.compilePipelines().whileRecording
            let encoders = graph?.branches.flatMap { $0.chains.flatMap(\.elements) }.filter { H264Encoder(rawValue: $0.factory) != nil }.count ?? 0
            try await session.startRunning()
            try await movie.startRecording()
            try await Task.sleep(for: .seconds(1))
            let before = cpuSeconds(RUSAGE_SELF), start = ContinuousClock.now
            try await Task.sleep(for: .seconds(seconds))
            let cpu = (cpuSeconds(RUSAGE_SELF) - before) / (ContinuousClock.now - start).seconds * 100
            let result = try await movie.stopRecording()
            await session.stopRunning()
            measured.append((cpu, encoders, result.videoFrameCount))
        }
        return [
            BenchmarkResult(
                name: "streaming: a stream and a recording of the same picture (CPU)", value: measured[0].cpu, unit: "% of a core",
                peer: "two encoders", peerValue: measured[1].cpu,
                note:
                    "640x480 30 fps '\(pattern)' served over RTSP (no reader) and recorded to MP4; \(measured[0].encoders) H.264 encoder(s) shared vs \(measured[1].encoders); frames recorded \(measured[0].frames) and \(measured[1].frames); \(Int(seconds)) s each, in this process"
            )
        ]
    }
}
