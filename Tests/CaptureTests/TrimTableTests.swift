import Foundation
import GStreamer
import Testing

@testable import Capture

/// The sources of the exact-trim table: 320x240, 3-5 s, made by FFmpeg (independent of the project's
/// code). `testsrc` draws a counter and a moving gradient, so every frame differs from its neighbours.
enum TrimTableSource: String, CaseIterable, Sendable {
    /// H.264 at 30 fps without B-frames, a keyframe every second, AAC; MP4.
    case constant
    /// H.264 at 30 fps with two B-frames (frames stored before frames shown earlier), AAC; MP4.
    case bFrames
    /// 5 fps with a gap (2.1-2.9 s: no frame), H.264 without B-frames, a keyframe every 4 frames, AAC; MP4.
    case variable
    /// 5 fps with gaps (1.1-1.5 s, 2.5-2.9 s), H.264 with B-frames, a keyframe every 4 frames, AAC; MP4.
    case variableBFrames
    /// H.264 at 30 fps without sound; MOV.
    case silent
    /// H.264 with B-frames and Opus; Matroska.
    case matroska
    /// VP8 and Opus; WebM.
    case webm

    var fileName: String {
        switch self {
        case .silent: "\(rawValue).mov"
        case .matroska: "\(rawValue).mkv"
        case .webm: "\(rawValue).webm"
        default: "\(rawValue).mp4"
        }
    }
    var hasAudio: Bool { self != .silent }

    /// The FFmpeg arguments that make it.
    var arguments: [String] {
        let x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "veryfast"]
        func lavfi(rate: Int, seconds: Int) -> [String] {
            ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=\(rate):duration=\(seconds)"]
                + (hasAudio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] : [])
        }
        switch self {
        case .constant:
            return lavfi(rate: 30, seconds: 3) + x264 + ["-x264-params", "bframes=0:keyint=30:min-keyint=30:scenecut=0", "-c:a", "aac"]
        case .bFrames:
            return lavfi(rate: 30, seconds: 3) + x264 + ["-x264-params", "bframes=2:keyint=30:min-keyint=30:scenecut=0", "-c:a", "aac"]
        case .variable:
            return lavfi(rate: 5, seconds: 5) + ["-vf", "select='not(between(t,2.1,2.9))'", "-fps_mode", "passthrough"] + x264
                + ["-x264-params", "bframes=0:keyint=4:min-keyint=4:scenecut=0", "-c:a", "aac", "-shortest"]
        case .variableBFrames:
            return lavfi(rate: 5, seconds: 4) + ["-vf", "select='not(between(t,1.1,1.5))*not(between(t,2.5,2.9))'", "-fps_mode", "passthrough"]
                + x264 + ["-x264-params", "bframes=2:keyint=4:min-keyint=4:scenecut=0", "-c:a", "aac", "-shortest"]
        case .silent:
            return lavfi(rate: 30, seconds: 3) + x264 + ["-x264-params", "bframes=0:keyint=30:min-keyint=30:scenecut=0"]
        case .matroska:
            return lavfi(rate: 30, seconds: 3) + x264 + ["-x264-params", "bframes=2:keyint=30:min-keyint=30:scenecut=0", "-c:a", "libopus"]
        case .webm:
            return lavfi(rate: 30, seconds: 3) + ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-g", "30", "-c:a", "libopus"]
        }
    }
}

/// One row of the table: a trim of a source, from, to, into a container.
struct TrimTableCase: Sendable, CustomTestStringConvertible {
    var source: TrimTableSource
    var from: Double
    var to: Double
    var container: String
    /// What the row is about.
    var note: String

    var testDescription: String { "\(source.rawValue) \(from)-\(to) s -> \(container) (\(note))" }
}

/// The sources, made once per run in a folder of their own.
final class TrimTableSources: @unchecked Sendable {
    static let shared = TrimTableSources()
    let directory: TemporaryDirectory? = try? TemporaryDirectory()
    private let made = Locked<[TrimTableSource: String]>([:])

    func path(_ source: TrimTableSource) throws -> String {
        guard let directory else { throw CaptureError.invalidConfiguration(object: "trim table", reason: "no temporary folder") }
        return try made.withLock { made in
            if let path = made[source] { return path }
            let path = directory.path(source.fileName)
            let result = try run(["ffmpeg", "-nostdin", "-v", "error", "-y"] + source.arguments + [path])
            guard result.status == 0 else { throw CaptureError.pipelineBuildFailed(object: "trim table source \(source)", reason: result.output) }
            made[source] = path
            return path
        }
    }
}

/// What ffprobe reads off a file's video: the time each frame is shown at (seconds), in the order they are shown.
func shownFrameTimes(_ path: String) throws -> [Double] {
    let result = try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path])
    guard result.status == 0 else { throw CaptureError.invalidConfiguration(object: "ffprobe", reason: result.output) }
    return result.output.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
}

/// The span of a file's sound (seconds, from its first packet to the end of its last; ffprobe), nil without sound.
func soundSpan(_ path: String) throws -> Double? {
    let result = try run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", path])
    let packets = result.output.split(whereSeparator: \.isNewline).compactMap { line -> (Double, Double)? in
        let fields = line.split(separator: ",").map { Double($0) }
        guard fields.count >= 2, let time = fields[0], let duration = fields[1] else { return nil }
        return (time, duration)
    }
    guard let first = packets.map(\.0).min(), let end = packets.map({ $0.0 + $0.1 }).max() else { return nil }
    return end - first
}

/// Every frame of a file's video decoded by FFmpeg, in the order shown, as an 80x60 grey image (bytes).
func greyFrames(_ path: String) throws -> [[UInt8]] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
        "ffmpeg", "-nostdin", "-v", "error", "-i", path, "-an", "-vf", "scale=80:60,format=gray", "-fps_mode", "passthrough", "-f", "rawvideo", "-",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CaptureError.invalidConfiguration(object: "ffmpeg", reason: "could not decode \(path)") }
    let size = 80 * 60
    let bytes = [UInt8](data)
    return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
}

/// The mean absolute difference of two grey images (0-255).
func greyDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
    Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(max(1, a.count))
}

/// Exact trims, checked frame by frame against the source: the output shows exactly the source's frames
/// whose time lies in `from ..< to` (within a millisecond), in order, each once, at their time minus
/// `from`, each one the source's picture (the nearest of its neighbours), with sound over the same
/// span; a range that holds no frame is refused and leaves nothing.
@Suite("Exact trims, frame by frame", .serialized) struct TrimTableTests {
    static let cases: [TrimTableCase] = [
        TrimTableCase(source: .constant, from: 1.01, to: 1.05, container: "mp4", note: "one frame"),
        TrimTableCase(source: .constant, from: 1, to: 2.2, container: "mp4", note: "starts on a keyframe"),
        TrimTableCase(source: .constant, from: 0.5, to: 2, container: "mp4", note: "ends on a keyframe"),
        TrimTableCase(source: .constant, from: 0, to: 0.7, container: "mov", note: "starts at 0"),
        TrimTableCase(source: .constant, from: 2.3, to: 3, container: "mkv", note: "ends at the end"),
        TrimTableCase(source: .bFrames, from: 0.5, to: 3, container: "mp4", note: "ends on a keyframe and at the end"),
        TrimTableCase(source: .bFrames, from: 0.5, to: 2, container: "mp4", note: "ends on a keyframe"),
        TrimTableCase(source: .bFrames, from: 1, to: 2.5, container: "mp4", note: "starts on a keyframe"),
        TrimTableCase(source: .bFrames, from: 2, to: 2.02, container: "mp4", note: "one frame, a keyframe"),
        TrimTableCase(source: .bFrames, from: 0, to: 1.2, container: "mkv", note: "starts at 0"),
        TrimTableCase(source: .variable, from: 1.5, to: 4.2, container: "mp4", note: "variable frame rate, across the gap"),
        TrimTableCase(source: .variable, from: 3.9, to: 5, container: "mp4", note: "variable frame rate, ends at the end"),
        TrimTableCase(source: .variableBFrames, from: 0.5, to: 3.3, container: "mp4", note: "variable frame rate, B-frames, both edges"),
        TrimTableCase(source: .variableBFrames, from: 0.5, to: 3.2, container: "mp4", note: "variable frame rate, B-frames, ends on a keyframe"),
        TrimTableCase(source: .variableBFrames, from: 0.9, to: 3.3, container: "mkv", note: "variable frame rate, B-frames, into Matroska"),
        TrimTableCase(source: .silent, from: 0.5, to: 2.5, container: "mov", note: "no sound"),
        TrimTableCase(source: .silent, from: 1, to: 3, container: "mp4", note: "no sound, ends at the end"),
        TrimTableCase(source: .matroska, from: 0.5, to: 2, container: "mkv", note: "Matroska, ends on a keyframe"),
        TrimTableCase(source: .matroska, from: 0.2, to: 1.5, container: "mp4", note: "Matroska into MP4 (re-encoded whole)"),
        TrimTableCase(source: .webm, from: 0.5, to: 2.1, container: "webm", note: "VP8 (re-encoded whole)"),
    ]

    @Test(arguments: cases) func exactTrimHoldsExactlyTheFramesOfTheRange(_ row: TrimTableCase) async throws {
        let source = try TrimTableSources.shared.path(row.source)
        let directory = try TemporaryDirectory()
        let result = try await VideoEditor.trim(videoAt: source, from: row.from, to: row.to, saveTo: directory.path("cut.\(row.container)"), mode: .exact)
        let sourceTimes = try shownFrameTimes(source)
        let expected = sourceTimes.indices.filter { sourceTimes[$0] >= row.from - 0.001 && sourceTimes[$0] < row.to - 0.001 }
        let times = try shownFrameTimes(result.location)
        #expect(times.count == expected.count, "frames: \(times) for the source's \(expected.map { sourceTimes[$0] })")
        guard times.count == expected.count else { return }
        // Each at its time in the source minus `from` (Matroska rounds to the millisecond; FFmpeg's
        // Matroska sources start their video 7 ms in).
        for (time, index) in zip(times, expected) {
            #expect(abs(time - (sourceTimes[index] - row.from)) < 0.009, "frame at \(time) s for the source's at \(sourceTimes[index]) s")
        }
        // Each is the source's picture: the nearest of the source's frames around it.
        let sourceFrames = try greyFrames(source), frames = try greyFrames(result.location)
        #expect(frames.count == expected.count && sourceFrames.count == sourceTimes.count)
        for (frame, index) in zip(frames, expected) where sourceFrames.indices.contains(index) {
            let nearest = (max(0, index - 2)...min(sourceFrames.count - 1, index + 2)).min {
                greyDifference(frame, sourceFrames[$0]) < greyDifference(frame, sourceFrames[$1])
            }
            #expect(nearest == index, "the frame for the source's at \(sourceTimes[index]) s looks like the one at \(nearest.map { sourceTimes[$0] } ?? -1) s")
        }
        // The sound covers the range (AAC and Opus encode whole blocks of 21 ms or less).
        if row.source.hasAudio {
            let span = try #require(try soundSpan(result.location), "no sound")
            #expect(abs(span - (row.to - row.from)) < 0.045, "sound over \(span) s")
        } else {
            #expect(try soundSpan(result.location) == nil)
        }
        #expect(result.duration <= row.to - row.from + 0.045)
        #expect(leftovers(directory.url.path).isEmpty)
    }

    static let empty: [TrimTableCase] = [
        TrimTableCase(source: .constant, from: 1.01, to: 1.02, container: "mp4", note: "shorter than a frame, with sound"),
        TrimTableCase(source: .bFrames, from: 2.99, to: 3, container: "mkv", note: "after the last frame"),
        TrimTableCase(source: .variable, from: 2.1, to: 2.9, container: "mp4", note: "inside the gap"),
        TrimTableCase(source: .silent, from: 0.51, to: 0.52, container: "mov", note: "shorter than a frame, no sound"),
    ]

    @Test(arguments: empty) func aRangeWithoutAFrameIsRefusedAndLeavesNothing(_ row: TrimTableCase) async throws {
        let source = try TrimTableSources.shared.path(row.source)
        let directory = try TemporaryDirectory()
        let location = directory.path("out/cut.\(row.container)")
        await #expect(throws: CaptureError.noFrameInRange(path: source, from: row.from, to: row.to)) {
            _ = try await VideoEditor.trim(videoAt: source, from: row.from, to: row.to, saveTo: location, mode: .exact)
        }
        let error = CaptureError.noFrameInRange(path: source, from: row.from, to: row.to)
        #expect(
            error.description.contains(row.source.fileName)
                && error.description.contains("\(CaptureError.seconds(row.from)) s to \(CaptureError.seconds(row.to)) s"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: location))
        #expect(!FileManager.default.fileExists(atPath: directory.path("out")))
        #expect(leftovers(directory.url.path).isEmpty)
    }

    /// The plan from the frames alone: which frames are in the range, what is copied, where each part goes.
    @Test func thePlanFollowsTheFramesNotTheFrameRate() throws {
        // Frames at 5 fps with a gap from 2.1 to 2.9 s, a keyframe every fourth.
        let times: [UInt64] = [0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 3000, 3200, 3400, 3600, 3800, 4000]
        let frames = times.enumerated().map { SourceFrame(time: $1 * 1_000_000, isKeyframe: $0 % 4 == 0, decodeOrder: $0) }
        #expect(EdgeTrim.shown(in: frames, from: 1.5, to: 4.2) == 8..<17)
        #expect(EdgeTrim.shown(in: frames, from: 2.1, to: 2.9).isEmpty)
        // A bound within a millisecond of a frame counts as at it.
        #expect(EdgeTrim.shown(in: frames, from: 1.6005, to: 2.0005) == 8..<10)
        let media = try #require(MediaInfo.discover(TrimTableSources.shared.path(.variable)))
        let plan = try EdgeTrim(source: "v.mp4", media: media, container: .mp4, start: 1.3, end: 3.5, frames: frames)
        // The frame at 1.4 s is encoded, those from the keyframe at 1.6 s to the one at 3.2 s copied, the rest encoded.
        #expect(plan.parts.map(\.copy) == [false, true, false])
        #expect(plan.parts.map(\.frames) == [7..<8, 8..<12, 12..<14])
        // Each goes where its first frame is shown after the start.
        #expect(plan.parts.map(\.offset) == [100_000_000, 300_000_000, 1_900_000_000])
        #expect(plan.copied == 1.6..<3.2)
        // The encoded parts seek halfway from the frame before and keep only their own frames.
        #expect(plan.parts[0].selection.seekStart == 1_300_000_000 && plan.parts[0].selection.window.contains(1_400_000_000))
        #expect(!plan.parts[0].selection.window.contains(1_300_000_000) && !plan.parts[0].selection.window.contains(1_600_000_000))
        #expect(plan.parts[2].selection.end == 3_500_000_000)
        // Up to the end of the file, the copy goes to the end.
        let toTheEnd = try EdgeTrim(source: "v.mp4", media: media, container: .mp4, start: 1.5, end: 4.2, frames: frames)
        #expect(toTheEnd.parts.map(\.copy) == [true] && toTheEnd.parts.map(\.frames) == [8..<17])
        #expect(throws: CaptureError.noFrameInRange(path: "v.mp4", from: 2.1, to: 2.9)) {
            _ = try EdgeTrim(source: "v.mp4", media: media, container: .mp4, start: 2.1, end: 2.9, frames: frames)
        }
    }
}
