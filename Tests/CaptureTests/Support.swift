import Foundation

@testable import Capture

/// Runs a command and returns its exit status and output (for making fixtures with GStreamer's own
/// tools and checking results with independent ones).
@discardableResult
func run(_ arguments: [String], timeout: TimeInterval = 60) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A temporary directory removed at deinit.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("capture-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A short H.264 MP4 made by gst-launch-1.0 (independent of the project's own code).
func makeVideoFile(_ path: String, seconds: Int = 2, size: Size = Size(width: 320, height: 240), rate: Int = 30) throws {
    let frames = seconds * rate
    let result = try run([
        "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=\(frames)", "pattern=ball", "!",
        "video/x-raw,width=\(size.width),height=\(size.height),framerate=\(rate)/1", "!",
        "x264enc", "speed-preset=ultrafast", "!", "mp4mux", "!", "filesink", "location=\(path)",
    ])
    guard result.status == 0 else { throw CaptureError.pipelineBuildFailed(object: "fixture \(path)", reason: result.output) }
}

/// Collects a session's events until one matches or the timeout passes.
func collectEvents(
    _ stream: AsyncStream<SessionEvent>, until stop: @escaping @Sendable (SessionEvent) -> Bool,
    timeout: Duration = .seconds(10)
) async -> [SessionEvent] {
    await withTaskGroup(of: [SessionEvent]?.self) { group in
        group.addTask {
            var seen: [SessionEvent] = []
            for await event in stream {
                seen.append(event)
                if stop(event) { break }
            }
            return seen
        }
        group.addTask {
            try? await Task.sleep(for: timeout); return nil
        }
        var result: [SessionEvent] = []
        if let first = await group.next(), let events = first { result = events }
        group.cancelAll()
        return result
    }
}
