import Capture
import Foundation
import GStreamer

/// The preview frames of one contender during one cycle: when each arrived (ContinuousClock) and its
/// buffer timestamp, plus the moments the cycle's steps began.
final class FrameLog: CaptureVideoDataOutputDelegate, @unchecked Sendable {
    private struct Frame {
        var arrival: ContinuousClock.Instant
        var pts: UInt64
        var segment: Int
    }
    private struct Log {
        var start: ContinuousClock.Instant?
        var frames: [Frame] = []
        var events: [(at: ContinuousClock.Instant, label: String)] = []
        var segment = 0
        var total = 0
        var driverDrops = 0
        var lastOffset: UInt64?
    }
    private let log = Locked(Log())

    func videoDataOutput(_ output: CaptureVideoDataOutput, didOutput frame: VideoFrame) {
        record(pts: UInt64((max(0, frame.timestamp) * 1e9).rounded()))
    }

    /// Frames the camera's driver never delivered, as our output reports them.
    func videoDataOutput(_ output: CaptureVideoDataOutput, didDrop reason: FrameDropReason) {
        if reason == .discontinuity { recordDriverDrops(1) }
    }

    func recordDriverDrops(_ count: Int) {
        log.withLock { if $0.start != nil { $0.driverDrops += count } }
    }

    /// For the peer: the V4L2 frame sequence number a v4l2src buffer carries (its offset), read where
    /// the source hands it on; a jump forward counts the frames the driver skipped (as our engine does).
    func recordSourceSequence(_ offset: UInt64) {
        let skipped = log.withLock { log -> Int in
            defer { log.lastOffset = offset }
            guard let last = log.lastOffset, offset > last + 1, offset != UInt64.max, offset - last < 10_000 else { return 0 }
            return Int(offset - last - 1)
        }
        if skipped > 0 { recordDriverDrops(skipped) }
    }

    /// One frame, on whatever thread delivers it (our delivery queue, camerabin's streaming thread).
    func record(pts: UInt64?) {
        let now = ContinuousClock.now
        log.withLock { log in
            log.total += 1
            guard log.start != nil, let pts, log.frames.count < 100_000 else { return }
            log.frames.append(Frame(arrival: now, pts: pts, segment: log.segment))
        }
    }

    /// Frames seen since the log was made, logged or not.
    var count: Int { log.value.total }

    func begin() {
        log.withLock { log in
            log.start = .now; log.frames = []; log.events = []; log.segment = 0; log.driverDrops = 0
        }
    }
    func mark(_ label: String) { log.withLock { $0.events.append((.now, label)) } }
    /// The timestamps start again from here (a restarted pipeline runs on a new running time).
    func newSegment() { log.withLock { $0.segment += 1 } }

    /// Ends the cycle and measures it. `frameInterval` (ms) is the nominal one of the format.
    func end(frameInterval: Double) -> ModeSwitchCycle {
        let (start, frames, events, driverDrops) = log.withLock { log in
            defer { log.start = nil }
            return (log.start ?? .now, log.frames, log.events, log.driverDrops)
        }
        let arrivals = frames.map { ($0.arrival - start).milliseconds }
        // Timestamps are running time: one line per pipeline run. A run's timestamps are placed on the
        // arrival clock by the run's smallest arrival-minus-timestamp (its base time plus the shortest
        // delivery latency); within a run that is a constant, so steps there are pure timestamp steps,
        // and only a step across a restart depends on the placement.
        var runs: [Int] = []
        for (index, frame) in frames.enumerated() {
            if index == 0 { runs.append(0); continue }
            let previous = frames[index - 1]
            runs.append(runs[index - 1] + (frame.segment != previous.segment || frame.pts < previous.pts ? 1 : 0))
        }
        var offsets: [Int: Double] = [:]
        for (index, frame) in frames.enumerated() {
            let offset = arrivals[index] - Double(frame.pts) / 1e6
            offsets[runs[index]] = min(offsets[runs[index]] ?? offset, offset)
        }
        // The loop above gave every run an offset.
        let placed = frames.indices.map { Double(frames[$0].pts) / 1e6 + offsets[runs[$0]]! }
        var cycle = ModeSwitchCycle(
            arrivalGap: 0, timestampGap: 0, framesLost: 0, driverDrops: driverDrops, frames: frames.count, restarts: (runs.last ?? 0),
            series: [], events: events.map { .init(t: ($0.at - start).milliseconds, label: $0.label) })
        for index in frames.indices.dropFirst() {
            let arrival = arrivals[index] - arrivals[index - 1]
            let timestamp = placed[index] - placed[index - 1]
            cycle.arrivalGap = max(cycle.arrivalGap, arrival)
            cycle.timestampGap = max(cycle.timestampGap, timestamp)
            if frameInterval > 0 { cycle.framesLost += max(0, Int((timestamp / frameInterval).rounded()) - 1) }
            cycle.series.append(.init(t: arrivals[index], arrival: arrival, timestamp: timestamp))
        }
        return cycle
    }
}

/// One photo -> video -> photo cycle of one contender, measured on its preview frames.
struct ModeSwitchCycle: Codable, Sendable {
    /// The largest gap between two consecutive preview frames by arrival time, ms.
    var arrivalGap: Double
    /// The largest step between two consecutive preview frames' buffer timestamps, ms.
    var timestampGap: Double
    /// Frames missing from the timestamps: each step counts round(step / frame interval) - 1.
    var framesLost: Int
    /// Frames the camera's driver skipped during the cycle, by its V4L2 sequence numbers (under TCG
    /// vivid skips frames whenever the guest is busy); they are among the lost ones. 0 for the test
    /// pattern.
    var driverDrops: Int
    var frames: Int
    /// Times the buffer timestamps started again (pipeline restarts).
    var restarts: Int
    /// Per frame: when it arrived (ms since the cycle began) and its two intervals (ms).
    var series: [Point]
    var events: [Event]

    struct Point: Codable, Sendable {
        var t: Double
        var arrival: Double
        var timestamp: Double
    }

    struct Event: Codable, Sendable {
        var t: Double
        var label: String
    }
}

/// What `--plot-data` writes: one cycle of each contender (the median one by arrival gap) and the
/// figures of every cycle.
struct ModeSwitchPlotData: Codable, Sendable {
    var input: String
    var format: String
    var frameInterval: Double
    var date: String
    var contenders: [Contender]

    struct Contender: Codable, Sendable {
        var name: String
        var description: String
        /// Which cycle (from 0) `cycle` is.
        var plottedCycle: Int
        var cycle: ModeSwitchCycle
        var arrivalGaps: [Double]
        var timestampGaps: [Double]
        var framesLost: [Int]
        var driverDrops: [Int]
    }
}

extension Benchmarks {
    /// Quiet time logged before a cycle's first step and after its last one: a stall the last step
    /// leaves behind is still inside the cycle.
    static let modeSwitchMargin = Duration.milliseconds(300)
    static let modeSwitchRecording = Duration.seconds(1)

    /// photo -> video -> photo, `cycles` times, on one running session (live reconfiguration), on
    /// camerabin (its mode property) and on a session rebuilt at each switch (stop, reconfigure, start).
    /// Measured on the preview frames: the largest gap by arrival and by buffer timestamps, frames lost.
    static func modeSwitch(input: CaptureDevice, cycles: Int, plotDataPath: String?, log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        if case .file = input.kind { throw BenchmarkError("mode-switch needs a camera or the test pattern, not a file") }
        guard input.mediaType == .video else { throw BenchmarkError("mode-switch needs a video input, not \(input.uniqueID)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-mode-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // 720p when the input gives it at 24 fps or more (the test pattern: 30); else VGA (vivid gives
        // 720p at 12.5 fps only).
        let hd = try? FormatSelector.resolve(preset: .hd1280x720, formats: input.formats, inputName: "camera")
        let preset: SessionPreset = (hd?.frameRate.value ?? 0) >= 24 ? .hd1280x720 : .vga640x480
        // The session's own compiled source: the peer's video source is the same element, same properties.
        let probe = CaptureSession(name: "bench-mode-switch-plan")
        try probe.addInput(CaptureDeviceInput(device: input, name: "camera"))
        try probe.setSessionPreset(preset)
        try probe.addOutput(CaptureVideoDataOutput(name: "preview"))
        guard let source = try probe.compile().sources.first(where: { $0.media == .video }), let format = source.format,
            let sourceElement = source.elements.first
        else {
            throw BenchmarkError("no video source compiled for \(input.uniqueID)")
        }
        let interval = 1000 / format.frameRate.value
        let what = "\(input.uniqueID) \(format.outputSize)@\(format.frameRate)"

        log("photo -> video -> photo, ours (one running session), \(cycles)x on \(what) ...")
        let ours = try await sessionCycles(input: input, preset: preset, cycles: cycles, rebuild: false, interval: interval, directory: directory)
        log("photo -> video -> photo, camerabin, \(cycles)x ...")
        // A peer that cannot do the cycle on this input is reported as failed; ours and the rebuild are
        // still measured (camerabin cannot switch modes on a PipeWire camera: its pipewiresrc renegotiates
        // at each switch and the recording never finishes).
        var camerabin: [ModeSwitchCycle] = []
        var camerabinFailure: String?
        do {
            camerabin = try await camerabinCycles(source: sourceElement, format: format, cycles: cycles, interval: interval, directory: directory)
        } catch {
            camerabinFailure = "\(error)"
            log("camerabin failed: \(error)")
        }
        log("photo -> video -> photo, rebuild (stopRunning, reconfigure, startRunning), \(cycles)x ...")
        let rebuild = try await sessionCycles(input: input, preset: preset, cycles: cycles, rebuild: true, interval: interval, directory: directory)

        if let plotDataPath {
            func contender(_ name: String, _ description: String, _ cycles: [ModeSwitchCycle]) -> ModeSwitchPlotData.Contender {
                let byGap = cycles.indices.sorted { cycles[$0].arrivalGap < cycles[$1].arrivalGap }
                let plotted = byGap[(byGap.count - 1) / 2]
                return .init(
                    name: name, description: description, plottedCycle: plotted, cycle: cycles[plotted],
                    arrivalGaps: cycles.map(\.arrivalGap), timestampGaps: cycles.map(\.timestampGap), framesLost: cycles.map(\.framesLost),
                    driverDrops: cycles.map(\.driverDrops))
            }
            let data = ModeSwitchPlotData(
                input: input.uniqueID, format: "\(format.outputSize)@\(format.frameRate)", frameInterval: interval,
                date: ISO8601DateFormatter().string(from: Date()),
                contenders: [
                    contender("ours", "one running CaptureSession, each switch one configuration block", ours),
                    camerabin.isEmpty ? nil : contender("camerabin", "GStreamer camerabin, mode property", camerabin),
                    contender("rebuild", "CaptureSession stopRunning + reconfigure + startRunning", rebuild),
                ].compactMap { $0 })
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(data).write(to: URL(fileURLWithPath: plotDataPath))
        }

        func lost(_ cycles: [ModeSwitchCycle]) -> String {
            let lost = cycles.map { String($0.framesLost) }.joined(separator: "/")
            guard cycles.contains(where: { $0.driverDrops > 0 }) else { return lost }
            return lost + " (skipped by the driver: " + cycles.map { String($0.driverDrops) }.joined(separator: "/") + ")"
        }
        let camerabinLost = camerabinFailure.map { "failed (\($0))" } ?? lost(camerabin)
        let frames = "median of \(cycles) cycles; frames lost per cycle: ours \(lost(ours)), camerabin \(camerabinLost), rebuild \(lost(rebuild))"
        let cycleName = "photo -> video -> photo (\(what), 1 s recording)"
        let camerabinPeer = camerabinFailure == nil ? "camerabin" : "camerabin (failed)"
        return [
            BenchmarkResult(
                name: "\(cycleName): largest preview gap by arrival", value: median(ours.map(\.arrivalGap)), unit: "ms",
                peer: camerabinPeer, peerValue: camerabin.isEmpty ? nil : median(camerabin.map(\.arrivalGap)), note: frames),
            BenchmarkResult(
                name: "\(cycleName): largest preview gap by arrival", value: median(ours.map(\.arrivalGap)), unit: "ms",
                peer: "stopRunning + reconfigure + startRunning", peerValue: median(rebuild.map(\.arrivalGap)), note: frames),
            BenchmarkResult(
                name: "\(cycleName): largest preview gap by buffer timestamps", value: median(ours.map(\.timestampGap)), unit: "ms",
                peer: camerabinPeer, peerValue: camerabin.isEmpty ? nil : median(camerabin.map(\.timestampGap)), note: frames),
            BenchmarkResult(
                name: "\(cycleName): largest preview gap by buffer timestamps", value: median(ours.map(\.timestampGap)), unit: "ms",
                peer: "stopRunning + reconfigure + startRunning", peerValue: median(rebuild.map(\.timestampGap)), note: frames),
        ]
    }

    /// Waits (bounded) until `log` has seen `frames` more frames.
    static func waitForFrames(_ log: FrameLog, _ frames: Int, who: String, timeout: Duration = .seconds(15)) async throws {
        let target = log.count + frames
        let deadline = ContinuousClock.now + timeout
        while log.count < target {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("\(who): fewer than \(frames) preview frames within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Ours, or (`rebuild`) the same session stopped and started around each switch.
    static func sessionCycles(
        input: CaptureDevice, preset: SessionPreset, cycles: Int, rebuild: Bool, interval: Double,
        directory: URL
    ) async throws -> [ModeSwitchCycle] {
        let who = rebuild ? "rebuild" : "ours"
        let frameLog = FrameLog()
        let session = CaptureSession(name: "bench-\(who)")
        try session.addInput(CaptureDeviceInput(device: input, name: "camera"))
        try session.setSessionPreset(preset)
        let preview = CaptureVideoDataOutput(name: "preview")
        preview.delegate = frameLog
        try session.addOutput(preview)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(photo)
        let microphone = try CaptureDeviceInput(device: .testTone, name: "microphone")
        let movie = CaptureMovieFileOutput(name: "movie")

        // One switch: in one configuration block, around a stop and a start for the rebuild.
        func change(_ edit: () throws -> Void) async throws {
            if rebuild {
                await session.stopRunning()
                frameLog.newSegment()
            }
            session.beginConfiguration()
            do { try edit() } catch {
                try? await session.commitConfiguration()
                throw error
            }
            try await session.commitConfiguration()
            if rebuild { try await session.startRunning() }
        }

        var results: [ModeSwitchCycle] = []
        try await session.startRunning()
        do {
            try await waitForFrames(frameLog, 10, who: who)
            _ = try await photo.capturePhoto(with: PhotoSettings(location: directory.appendingPathComponent("\(who)_warmup.jpg").path))
            for cycle in 0..<cycles {
                frameLog.begin()
                try await Task.sleep(for: modeSwitchMargin)
                frameLog.mark("photo")
                _ = try await photo.capturePhoto(with: PhotoSettings(location: directory.appendingPathComponent("\(who)_\(cycle)_a.jpg").path))
                frameLog.mark("to video")
                try await change {
                    try session.removeOutput(photo)
                    try session.addInput(microphone)
                    try session.addOutput(movie)
                }
                frameLog.mark("record")
                _ = try await movie.startRecording(to: directory.appendingPathComponent("\(who)_\(cycle).mp4"))
                try await Task.sleep(for: modeSwitchRecording)
                frameLog.mark("stop")
                _ = try await movie.stopRecording()
                frameLog.mark("to photo")
                try await change {
                    try session.removeOutput(movie)
                    try session.removeInput(microphone)
                    try session.addOutput(photo)
                }
                frameLog.mark("photo")
                _ = try await photo.capturePhoto(with: PhotoSettings(location: directory.appendingPathComponent("\(who)_\(cycle)_b.jpg").path))
                try await Task.sleep(for: modeSwitchMargin)
                results.append(frameLog.end(frameInterval: interval))
            }
        } catch {
            await session.stopRunning()
            throw error
        }
        await session.stopRunning()
        return results
    }

    /// camerabin with the session's own source element, an appsink viewfinder (like our data output),
    /// a live audiotestsrc and MP4 H.264 + AAC with the encoder settings our movie output uses.
    static func camerabinCycles(
        source: ElementSpec, format: ResolvedFormat, cycles: Int, interval: Double,
        directory: URL
    ) async throws -> [ModeSwitchCycle] {
        let frameLog = FrameLog()
        let size = format.outputSize
        let caps = "video/x-raw,width=\(size.width),height=\(size.height),framerate=\(format.frameRate.caps)"
        let videoSource = try Element.make(source, name: "peer-source")
        let viewfinder = try Element.make("appsink", name: "peer-viewfinder")
        for (key, value) in [("sync", "false"), ("async", "false"), ("max-buffers", "2"), ("drop", "true"), ("enable-last-sample", "false")] {
            try viewfinder.set(key, value)
        }
        viewfinder.setAppSinkCallbacks(onSample: { sample in frameLog.record(pts: sample.buffer?.pts) })
        if source.factory == "v4l2src" {
            videoSource.staticPad("src")?.addProbe(.buffer) { _, info in
                if let offset = info.buffer?.offset { frameLog.recordSourceSequence(offset) }
                return .ok
            }
        }
        let audioSource = try Element.make("audiotestsrc", name: "peer-microphone")
        try audioSource.set("is-live", "true")
        let peer = try CamerabinPeer(
            videoSource: videoSource, viewfinderSink: viewfinder, audioSource: audioSource,
            settings: .init(
                viewfinderCaps: caps, imageCaps: "video/x-raw,width=\(size.width),height=\(size.height)", videoCaps: caps,
                videoProfile: "video/quicktime,variant=iso:video/x-h264:audio/mpeg,mpegversion=4"))
        try peer.start()
        defer { peer.stop() }
        try await waitForFrames(frameLog, 10, who: "camerabin")
        // The encoder camerabin's encodebin made: the settings our movie output gives x264enc.
        let bitRate = max(200_000, Int(Double(size.width * size.height) * format.frameRate.value * 0.1))
        try peer.tune("x264enc", [("speed-preset", "veryfast"), ("tune", "zerolatency"), ("bitrate", "\(bitRate / 1000)")])
        try await peer.captureImage(to: directory.appendingPathComponent("camerabin_warmup.jpg").path)
        var results: [ModeSwitchCycle] = []
        for cycle in 0..<cycles {
            frameLog.begin()
            try await Task.sleep(for: modeSwitchMargin)
            frameLog.mark("photo")
            try await peer.captureImage(to: directory.appendingPathComponent("camerabin_\(cycle)_a.jpg").path)
            frameLog.mark("to video")
            try peer.setMode(.video)
            frameLog.mark("record")
            try await peer.startRecording(to: directory.appendingPathComponent("camerabin_\(cycle).mp4").path)
            try await Task.sleep(for: modeSwitchRecording)
            frameLog.mark("stop")
            try await peer.stopRecording()
            frameLog.mark("to photo")
            try peer.setMode(.image)
            frameLog.mark("photo")
            try await peer.captureImage(to: directory.appendingPathComponent("camerabin_\(cycle)_b.jpg").path)
            try await Task.sleep(for: modeSwitchMargin)
            results.append(frameLog.end(frameInterval: interval))
        }
        return results
    }
}
