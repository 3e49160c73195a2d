import CaptureTestSupport
import Foundation
import Testing

/// Runs `capture` with the album in the scratch folder (never the user's own).
private func captureWithAlbum(_ arguments: [String], _ scratch: Scratch) throws -> (status: Int32, output: String, error: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["CAPTURE_PICTURES_DIR"] = scratch.file("Pictures")
    environment["CAPTURE_VIDEOS_DIR"] = scratch.file("Videos")
    let result = try ChildProcess([captureBinary] + arguments, environment: environment).finish()
    return (result.status, result.output, result.error)
}

/// A 4 s 640x360 H.264 + AAC movie with a keyframe every second, made by gst-launch-1.0.
private func makeMovie(_ path: String) throws {
    let result = try tool([
        "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=120", "pattern=ball", "!", "video/x-raw,width=640,height=360,framerate=30/1", "!",
        "x264enc", "key-int-max=30", "speed-preset=ultrafast", "!", "h264parse", "!", "mp4mux", "name=m", "!", "filesink", "location=\(path)",
        "audiotestsrc", "num-buffers=188", "!", "voaacenc", "!", "aacparse", "!", "m.",
    ])
    #expect(result.status == 0, "\(result.output)")
}

@Suite("capture library, thumbnail, trim", .serialized) struct LibraryCommandTests {
    @Test func libraryAddListAndPath() throws {
        let scratch = try Scratch()
        try makeMovie(scratch.file("clip.mp4"))
        #expect(try tool(["convert", "-size", "320x200", "xc:green", scratch.file("shot.jpg")]).status == 0)
        let path = try captureWithAlbum(["library", "path", "--json"], scratch)
        #expect(path.status == 0 && path.output.contains(scratch.file("Pictures")))
        let add = try captureWithAlbum(["library", "add", scratch.file("shot.jpg"), scratch.file("clip.mp4"), "--json"], scratch)
        #expect(add.status == 0, "\(add.error)")
        let edited = try captureWithAlbum(["library", "add", scratch.file("shot.jpg"), "--crop", "0,0,0.5,1", "--size", "100x100"], scratch)
        #expect(edited.status == 0, "\(edited.error)")
        let list = try captureWithAlbum(["library", "list", "--json"], scratch)
        #expect(list.status == 0)
        let items = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]] ?? []
        #expect(items.count == 3)
        #expect(
            Set(items.compactMap { $0["path"] as? String }) == [
                scratch.file("Pictures/shot.jpg"), scratch.file("Pictures/IMG_0001.jpg"), scratch.file("Videos/clip.mp4"),
            ])
        let video = items.first { $0["kind"] as? String == "video" }
        #expect(video?["width"] as? Int == 640 && abs((video?["duration"] as? Double ?? 0) - 4.2) < 0.25)  // the sound runs to 4.37 s
        // The edited photo: the left half (160x200) scaled to fit 100x100.
        #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("Pictures/IMG_0001.jpg")]).output == "80x100 JPEG")
        // Not media: 65, nothing saved.
        try scratch.write("notes.txt", "hello")
        let bad = try captureWithAlbum(["library", "add", scratch.file("notes.txt")], scratch)
        #expect(bad.status == 65 && bad.error.contains("notes.txt"))
        #expect(try captureWithAlbum(["library", "frob"], scratch).status == 64)
    }

    @Test func thumbnailAndTrim() throws {
        let scratch = try Scratch()
        let movie = scratch.file("clip.mp4")
        try makeMovie(movie)
        let thumb = try capture(["thumbnail", movie, "--at", "50%", "-o", scratch.file("t.png"), "--size", "320x320", "--json"])
        #expect(thumb.status == 0, "\(thumb.error)")
        #expect(try tool(["identify", "-format", "%wx%h %m", scratch.file("t.png")]).output == "320x180 PNG")
        #expect(thumb.output.contains("\"actual-time\": 2"))
        let trimmed = try capture(["trim", movie, "--from", "1.5", "--to", "3", "-o", scratch.file("cut.mp4"), "--exact", "--json"])
        #expect(trimmed.status == 0, "\(trimmed.error)")
        // Keyframes every second: 1.5-2 s re-encoded, 2-3 s copied.
        #expect(
            trimmed.output.contains("\"strategy\": \"edges\"") && trimmed.output.contains("\"copied-from\": 2,") && trimmed.output.contains("\"copied-to\": 3"),
            "\(trimmed.output)")
        let duration = try tool([
            "ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "stream=duration", "-of", "csv=p=0", scratch.file("cut.mp4"),
        ]).output
        #expect(abs((Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 1.5) <= 1.0 / 30 + 0.001)
        // Never replaced: the same name again goes to cut-1.mp4.
        let again = try capture(["trim", scratch.file("cut.mp4"), "--from", "0", "--to", "1", "-o", scratch.file("cut.mp4")])
        #expect(again.status == 0 && again.output.contains("cut-1.mp4"))
        #expect(try capture(["trim", movie, "--from", "3", "--to", "1", "-o", scratch.file("x.mp4")]).status == 65)
        #expect(try capture(["trim", movie, "--from", "1", "--to", "9", "-o", scratch.file("x.mp4")]).status == 65)
        #expect(try capture(["thumbnail", movie, "--at", "12"]).status == 65)
        #expect(try capture(["trim", movie, "--from", "1"]).status == 64)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("x.mp4")))
    }
}
