import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// `MovieFileScan` against files GStreamer's muxers wrote (gst-launch-1.0), cut where a killed
/// recording could be cut: a whole frame is found exactly when one is on disk.
@Suite struct MovieFileScanTests {
    private func make(_ path: String, muxer: [String]) throws {
        let result = try ChildProcess(
            [
                "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=60", "!", "video/x-raw,width=160,height=120,framerate=30/1", "!",
                "x264enc", "key-int-max=15", "speed-preset=ultrafast", "!", "h264parse", "!",
            ] + muxer + ["!", "filesink", "location=\(path)"]
        ).finish()
        #expect(result.status == 0, "\(result.error)")
    }

    /// The file cut to `count` bytes, as a copy.
    private func cut(_ path: String, to count: Int) throws -> String {
        let copy = path + ".cut-\(count)"
        try Data(contentsOf: URL(fileURLWithPath: path)).prefix(count).write(to: URL(fileURLWithPath: copy))
        return copy
    }

    private func size(_ path: String) throws -> Int { try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0 }

    /// The offset just past the first box of `type` in an ISO file (by walking the top-level boxes).
    private func endOfFirstBox(_ type: String, in path: String) throws -> Int? {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 0
        while offset + 8 <= data.count {
            let size = data[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if String(decoding: data[(offset + 4)..<(offset + 8)], as: UTF8.self) == type { return offset + size }
            guard size >= 8 else { return nil }
            offset += size
        }
        return nil
    }

    @Test func aFragmentedMP4HoldsAFrameOnceItsFirstFragmentIsWhole() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("f.mp4")
        try make(path, muxer: ["mp4mux", "fragment-duration=500"])
        #expect(MovieFileScan.holdsVideoFrame(path, container: .mp4))
        let moofEnd = try #require(try endOfFirstBox("moof", in: path))
        let mdatEnd = try #require(try endOfFirstBox("mdat", in: path))
        #expect(!MovieFileScan.holdsVideoFrame(try cut(path, to: moofEnd), container: .mp4), "headers and a moof, no data")
        #expect(!MovieFileScan.holdsVideoFrame(try cut(path, to: mdatEnd - 1), container: .mp4), "the fragment's data cut short")
        #expect(MovieFileScan.holdsVideoFrame(try cut(path, to: mdatEnd), container: .mp4))
        #expect(!MovieFileScan.holdsVideoFrame(directory.path("missing.mp4"), container: .mp4))
    }

    @Test func anUnfragmentedMP4HoldsAFrameOnlyOnceIndexed() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("plain.mp4")
        try make(path, muxer: ["mp4mux"])
        #expect(MovieFileScan.holdsVideoFrame(path, container: .mp4))
        #expect(!MovieFileScan.holdsVideoFrame(try cut(path, to: try size(path) - 10), container: .mp4), "the index cut short")
    }

    @Test func aMatroskaFileHoldsAFrameOnceAVideoBlockIsWhole() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("m.mkv")
        try make(path, muxer: ["matroskamux"])
        #expect(MovieFileScan.holdsVideoFrame(path, container: .mkv))
        // The headers (EBML, segment info, tracks) of a 60-frame 160x120 file are well under 300 bytes;
        // the first block (a key frame) is larger than that.
        #expect(!MovieFileScan.holdsVideoFrame(try cut(path, to: 300), container: .mkv))
        #expect(!MovieFileScan.holdsVideoFrame(try cut(path, to: 40), container: .mkv))
        #expect(MovieFileScan.holdsVideoFrame(try cut(path, to: try size(path) / 2), container: .mkv))
    }
}
