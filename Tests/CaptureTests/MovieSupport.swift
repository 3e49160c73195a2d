import Foundation
import Testing

@testable import Capture

/// What ffprobe (FFmpeg's prober, independent of GStreamer and of this project) reads off a movie.
struct ProbedMovie {
    struct Stream: Decodable {
        var codec_type: String
        var codec_name: String?
        var width: Int?
        var height: Int?
        var r_frame_rate: String?
        var avg_frame_rate: String?
        var duration: String?
        var nb_read_frames: String?
    }
    struct Format: Decodable {
        var format_name: String
        var duration: String?
        var size: String?
    }
    private struct Output: Decodable {
        var streams: [Stream]
        var format: Format
    }

    let streams: [Stream]
    let format: Format
    let path: String

    /// Probes a file; `countFrames` decodes the whole file to count the video frames.
    init(_ path: String, countFrames: Bool = false) throws {
        var arguments = ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams"]
        if countFrames { arguments += ["-count_frames"] }
        let result = try run(arguments + [path])
        guard result.status == 0, let start = result.output.firstIndex(of: "{") else {
            throw CaptureError.invalidConfiguration(object: path, reason: "ffprobe failed: \(result.output)")
        }
        let decoded = try JSONDecoder().decode(Output.self, from: Data(result.output[start...].utf8))
        streams = decoded.streams
        format = decoded.format
        self.path = path
    }

    var video: Stream? { streams.first { $0.codec_type == "video" } }
    var audio: Stream? { streams.first { $0.codec_type == "audio" } }
    /// The container's duration (seconds), else the longest stream's.
    var duration: Double {
        if let value = format.duration.flatMap(Double.init) { return value }
        return streams.compactMap { $0.duration.flatMap(Double.init) }.max() ?? 0
    }
    var videoDuration: Double? { video?.duration.flatMap(Double.init) }
    var audioDuration: Double? { audio?.duration.flatMap(Double.init) }
    var frameRate: Double? {
        guard let text = video?.r_frame_rate else { return nil }
        let parts = text.split(separator: "/").compactMap { Double($0) }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : nil
    }
    var frameCount: Int? { video?.nb_read_frames.flatMap(Int.init) }

    /// The presentation times of the video packets, in file order (seconds).
    func videoPacketTimes() throws -> [Double] {
        let result = try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
        return result.output.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.sorted()
    }
}

/// Decodes every frame with ffmpeg; true when it exits 0.
func decodesWithFFmpeg(_ path: String) throws -> Bool {
    try run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"]).status == 0
}

/// A session with the test pattern, the test tone (`audio`) and a headless preview (`preview`), not started.
func movieSession(preset: SessionPreset = .cif352x288, audio: Bool = true, preview: Bool = true, failAfterFrames: Int? = nil) async throws -> CaptureSession {
    let session = CaptureSession()
    try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(failAfterFrames: failAfterFrames)))
    try session.setSessionPreset(preset)
    if audio { try session.addInput(CaptureDeviceInput(device: .testTone, name: "mic")) }
    if preview { try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none)) }
    return session
}

/// Records the delegate calls of a recording, in order.
final class RecordingLog: CaptureFileOutputRecordingDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String] = []
    private var finished: MovieRecordingResult?
    private var waiting: [CheckedContinuation<MovieRecordingResult?, Never>] = []
    var recorded: [String] { lock.withLock { calls } }
    var result: MovieRecordingResult? { lock.withLock { finished } }
    func fileOutput(_ output: CaptureMovieFileOutput, didStartRecordingTo fileURL: URL, firstTimestamp: Double) { lock.withLock { calls.append("start") } }
    func fileOutput(_ output: CaptureMovieFileOutput, didPauseRecordingTo fileURL: URL) { lock.withLock { calls.append("pause") } }
    func fileOutput(_ output: CaptureMovieFileOutput, didResumeRecordingTo fileURL: URL) { lock.withLock { calls.append("resume") } }
    func fileOutput(_ output: CaptureMovieFileOutput, willFinishRecordingTo fileURL: URL, error: CaptureError?) {
        lock.withLock { calls.append("will-finish") }
    }
    func fileOutput(_ output: CaptureMovieFileOutput, didFinishRecordingTo fileURL: URL, result: MovieRecordingResult) {
        let waiters = lock.withLock {
            calls.append("finish")
            finished = result
            defer { waiting.removeAll() }
            return waiting
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// The result the delegate is given, once it is (the delegate is called on the output's own
    /// queue, after the call that ended the recording returned); nil when it was not within `timeout`.
    func finishedResult(timeout: Duration = .seconds(20)) async -> MovieRecordingResult? {
        await withTaskGroup(of: MovieRecordingResult?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.lock.withLock { () -> MovieRecordingResult? in
                        if let finished = self.finished { return finished }
                        self.waiting.append(continuation)
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first == nil {
                // The time-out won: let the continuation go.
                let waiters = lock.withLock {
                    defer { waiting.removeAll() }
                    return waiting
                }
                for waiter in waiters { waiter.resume(returning: nil) }
            }
            return first
        }
    }
}
