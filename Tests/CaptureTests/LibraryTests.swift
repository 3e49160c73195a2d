import Foundation
import Testing

@testable import Capture

/// A 10 s 640x360 @ 30 fps H.264 + AAC movie whose frames show their own time (timeoverlay) and a moving
/// ball, a keyframe every second (every `keyframeInterval` frames); made by gst-launch-1.0. The `preset`
/// is x264's: `ultrafast` makes no B-frames, `veryfast` does.
func makeTimedMovie(_ path: String, seconds: Int = 10, keyframeInterval: Int = 30, preset: String = "ultrafast") throws {
    let result = try run([
        "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=\(seconds * 30)", "pattern=ball", "!",
        "video/x-raw,width=640,height=360,framerate=30/1", "!", "timeoverlay", "font-desc=Sans 36", "!",
        "x264enc", "key-int-max=\(keyframeInterval)", "speed-preset=\(preset)", "!", "h264parse", "!", "mp4mux", "name=m", "!", "filesink", "location=\(path)",
        "audiotestsrc", "num-buffers=\(seconds * 47)", "!", "audio/x-raw,rate=48000", "!", "voaacenc", "!", "aacparse", "!", "m.",
    ])
    guard result.status == 0 else { throw CaptureError.pipelineBuildFailed(object: "fixture \(path)", reason: result.output) }
}

/// ImageMagick's normalized RMSE between a trimmed copy's first frame and the source's frame at a time.
func firstFrameDifference(_ trimmed: String, _ source: String, at seconds: Double, in directory: TemporaryDirectory) throws -> Double {
    let first = directory.path("first.png"), expected = directory.path("source.png")
    try ffmpegFrame(trimmed, at: 0, to: first)
    try ffmpegFrame(source, at: seconds, to: expected)
    return try imageDifference(first, expected)
}

/// ImageMagick's normalized RMSE between two images (0: identical).
func imageDifference(_ a: String, _ b: String) throws -> Double {
    let result = try run(["compare", "-metric", "RMSE", a, b, "null:"])
    guard let open = result.output.firstIndex(of: "("), let close = result.output.firstIndex(of: ")"),
        let value = Double(result.output[result.output.index(after: open)..<close])
    else {
        throw CaptureError.invalidConfiguration(object: "compare", reason: result.output)
    }
    return value
}

/// The frame FFmpeg decodes at a time (an input seek, which FFmpeg makes exact), as PNG.
func ffmpegFrame(_ movie: String, at seconds: Double, to path: String) throws {
    let result = try run(["ffmpeg", "-v", "error", "-y", "-ss", String(seconds), "-i", movie, "-frames:v", "1", path])
    guard result.status == 0 else { throw CaptureError.invalidConfiguration(object: "ffmpeg", reason: result.output) }
}

/// A movie's video packets in file order: presentation time, keyframe or not, MD5 of the bytes (ffprobe).
func videoPackets(_ movie: String) throws -> [(time: Double, isKeyframe: Bool, hash: String)] {
    let result = try run([
        "ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,flags,data_hash",
        "-show_data_hash", "MD5", "-of", "csv=p=0", movie,
    ])
    guard result.status == 0 else { throw CaptureError.invalidConfiguration(object: "ffprobe", reason: result.output) }
    return result.output.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: ",")
        guard fields.count == 3, let time = Double(fields[0]) else { return nil }
        return (time, fields[1].hasPrefix("K"), String(fields[2]))
    }
}

/// Files a failed edit could leave in a folder (temporaries, partial outputs).
func leftovers(_ folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(".capture-") }
}

@Suite("Photo library", .serialized) struct MediaLibraryTests {
    @Test func folderChoiceFollowsOverridesThenXDG() throws {
        let directory = try TemporaryDirectory()
        try "# written by xdg-user-dirs-update\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\nXDG_VIDEOS_DIR=\"/srv/clips\"\nXDG_MUSIC_DIR=\"relative\"\n"
            .write(toFile: directory.path("user-dirs.dirs"), atomically: true, encoding: .utf8)
        let xdg = MediaLibrary.user(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": directory.url.path])
        #expect(xdg == MediaLibrary(picturesFolder: "/home/ada/Bilder", videosFolder: "/srv/clips"))
        // The same file with CRLF endings.
        let crlf = try TemporaryDirectory()
        try "# written elsewhere\r\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\r\nXDG_VIDEOS_DIR=\"/srv/clips\"\r\n"
            .write(toFile: crlf.path("user-dirs.dirs"), atomically: true, encoding: .utf8)
        #expect(MediaLibrary.user(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": crlf.url.path]) == xdg)
        let overridden = MediaLibrary.user(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": directory.url.path, "CAPTURE_PICTURES_DIR": "/p"])
        #expect(overridden.picturesFolder == "/p" && overridden.videosFolder == "/srv/clips")
        let plain = MediaLibrary.user(environment: ["HOME": "/home/ada", "XDG_CONFIG_HOME": "/nonexistent"])
        #expect(plain == MediaLibrary(picturesFolder: "/home/ada/Pictures", videosFolder: "/home/ada/Videos"))
    }

    @Test func savesNeverOverwriteAndListNewestFirst() async throws {
        let directory = try TemporaryDirectory()
        let library = MediaLibrary(picturesFolder: directory.path("Pictures"), videosFolder: directory.path("Videos"))
        let movie = directory.path("clip.mp4")
        try makeTimedMovie(movie, seconds: 2)
        let image = directory.path("shot.png")
        #expect(try run(["convert", "-size", "64x48", "xc:red", image]).status == 0)
        let first = try await library.save(photoAt: image)
        let second = try await library.save(photoAt: image)
        #expect(first.path == directory.path("Pictures/shot.png"))
        #expect(second.path == directory.path("Pictures/shot-1.png"))
        #expect(first.width == 64 && first.height == 48)
        let data = try await library.save(photoData: Array(try Data(contentsOf: URL(fileURLWithPath: image))))
        #expect(data.path == directory.path("Pictures/IMG_0001.png"))
        let video = try await library.save(videoAt: movie)
        #expect(video.kind == .video && video.width == 640 && video.height == 360)
        #expect(abs((video.duration ?? 0) - 2) < 0.1)
        #expect(try run(["cmp", movie, video.path]).status == 0)
        // Newest first: make the first photo the newest.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: first.path)
        let items = library.items()
        #expect(items.count == 4)
        #expect(items.first?.path == first.path)
        #expect(library.items(of: .video).map(\.path) == [video.path])
        #expect(library.newest(.photo)?.path == first.path)
        #expect(leftovers(directory.path("Pictures")).isEmpty && leftovers(directory.path("Videos")).isEmpty)
    }

    @Test func compatibilityIsProbedFromTheFile() async throws {
        let directory = try TemporaryDirectory()
        let library = MediaLibrary(picturesFolder: directory.path("P"), videosFolder: directory.path("V"))
        let movie = directory.path("clip.mp4")
        try makeTimedMovie(movie, seconds: 1)
        #expect(library.isCompatible(videoAt: movie))
        let text = directory.path("notes.txt")
        try "not a movie".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(!library.isCompatible(videoAt: text))
        await #expect(throws: CaptureError.self) { _ = try await library.save(videoAt: text) }
        let sound = directory.path("tone.ogg")
        #expect(
            try run(["gst-launch-1.0", "-q", "audiotestsrc", "num-buffers=20", "!", "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(sound)"]).status
                == 0)
        do {
            try library.checkCompatible(videoAt: sound)
            Issue.record("an audio file was taken as a video")
        } catch {
            guard case .videoNotCompatible(let path, _) = error else { Issue.record("\(error)"); return }
            #expect(path == sound)
        }
        // Truncated before its index: not media.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: movie))
        let truncated = directory.path("cut.mp4")
        try bytes.prefix(4000).write(to: URL(fileURLWithPath: truncated))
        do {
            try library.checkCompatible(videoAt: truncated)
            Issue.record("a truncated file was taken")
        } catch {
            #expect(error.name == "not-a-media-file")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("V")))
    }

    @Test func unwritableLibraryIsATypedErrorAndLeavesNothing() async throws {
        let directory = try TemporaryDirectory()
        try "file".write(toFile: directory.path("blocker"), atomically: true, encoding: .utf8)
        let library = MediaLibrary(picturesFolder: directory.path("blocker/Pictures"), videosFolder: directory.path("blocker/Videos"))
        do {
            _ = try await library.save(
                photoData: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 16, 0, 0, 0, 16, 8, 2, 0, 0, 0])
            Issue.record("saved under a regular file")
        } catch {
            guard case .locationNotWritable(let path, _) = error else { Issue.record("\(error)"); return }
            #expect(path.hasPrefix(directory.path("blocker/Pictures")))
        }
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root")) func fullLibraryIsDiskFull() async throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.path("full")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        guard try run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint]).status == 0 else { return }
        defer { _ = try? run(["umount", mountPoint]) }
        let movie = directory.path("clip.mp4")
        try makeTimedMovie(movie, seconds: 2)
        let library = MediaLibrary(picturesFolder: mountPoint, videosFolder: mountPoint)
        do {
            _ = try await library.save(videoAt: movie)
            Issue.record("a 2 s movie fit in 64 KiB")
        } catch {
            #expect(error == .diskFull(path: "\(mountPoint)/clip.mp4"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty)
    }

    @Test func cameraDeliversPhotosAndVideos() throws {
        let camera = try CaptureDevice.resolve("test-pattern")
        #expect(camera.availableMediaTypes == [.photo, .video])
        let tone = try CaptureDevice.resolve("test-tone")
        #expect(tone.availableMediaTypes.isEmpty)
    }
}

@Suite("Thumbnails", .serialized) struct AssetImageGeneratorTests {
    @Test func exactFrameMatchesTheFrameFFmpegDecodesAtThatTime() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie)
        var generator = AssetImageGenerator(videoAt: movie)
        generator.codec = .png
        let images = try await generator.images(at: [.seconds(2.5), .middle, .fraction(0.9)])
        #expect(images.map(\.width) == [640, 640, 640] && images.map(\.height) == [360, 360, 360])
        // The middle of the 10.03 s file (its sound lasts a little longer than its pictures).
        #expect(abs(images[1].requestedTime - 5.013) < 0.01)
        for image in images {
            #expect(abs(image.actualTime - image.requestedTime) < 1.0 / 30)
            let ours = directory.path("ours-\(image.requestedTime).png")
            try Data(image.data).write(to: URL(fileURLWithPath: ours))
            let same = directory.path("same-\(image.requestedTime).png"), next = directory.path("next-\(image.requestedTime).png")
            // The frame shown at the time began at or before it; FFmpeg's input seek gives the first frame
            // that begins at or after a time, so it is asked for that frame's own start.
            let frameStart = (image.requestedTime * 30 + 1e-6).rounded(.down) / 30
            try ffmpegFrame(movie, at: frameStart, to: same)
            try ffmpegFrame(movie, at: frameStart + 0.1, to: next)
            let toSame = try imageDifference(ours, same), toNext = try imageDifference(ours, next)
            // The same frame differs by encoding noise only; three frames later the clock and the ball moved.
            #expect(toSame < 0.01, "frame at \(image.requestedTime): \(toSame) from FFmpeg's")
            #expect(toNext > 5 * toSame && toNext > 0.02, "frame at \(image.requestedTime): \(toNext) from FFmpeg's three frames later")
        }
    }

    @Test func keyframeToleranceLandsOnAKeyframe() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie, seconds: 4)
        var generator = AssetImageGenerator(videoAt: movie)
        generator.tolerance = .keyframe
        generator.maximumSize = Size(width: 200, height: 200)
        let image = try await generator.image(at: .seconds(2.2))
        // Keyframes every second: the nearest to 2.2 s is 2 s.
        #expect(abs(image.actualTime - 2) < 0.001)
        #expect(image.width == 200 && image.height == 112)
        let saved = try await generator.saveImage(at: .seconds(1), to: directory.path("thumb"))
        #expect(saved.location == directory.path("thumb.jpg"))
        #expect(try run(["identify", "-format", "%wx%h %m", directory.path("thumb.jpg")]).output == "200x112 JPEG")
    }

    @Test func rotationTagIsApplied() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4"), rotated = directory.path("rotated.mp4")
        try makeTimedMovie(movie, seconds: 1)
        #expect(try run(["ffmpeg", "-v", "error", "-i", movie, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated]).status == 0)
        let image = try await AssetImageGenerator(videoAt: rotated).image()
        #expect(image.width == 360 && image.height == 640)
    }

    @Test func badInputsAreTypedErrors() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie, seconds: 2)
        do {
            _ = try await AssetImageGenerator(videoAt: movie).image(at: .seconds(3))
            Issue.record("an image past the end")
        } catch {
            guard case .timeOutOfRange(let path, let time, let duration) = error else { Issue.record("\(error)"); return }
            #expect(path == movie && time == 3 && abs(duration - 2) < 0.1)
        }
        let text = directory.path("x.txt")
        try "x".write(toFile: text, atomically: true, encoding: .utf8)
        do {
            _ = try await AssetImageGenerator(videoAt: text).image()
            Issue.record("an image from a text file")
        } catch {
            #expect(error.name == "not-a-media-file")
            #expect(error.description.contains("x.txt"))
        }
    }
}

@Suite("Trimming", .serialized) struct VideoEditorTests {
    @Test func exactTrimIsWithinOneFrameWithSoundInSync() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie)
        let before = try Data(contentsOf: URL(fileURLWithPath: movie))
        let result = try await VideoEditor.trim(videoAt: movie, from: 2.5, to: 6.1, saveTo: directory.path("exact.mp4"), mode: .exact)
        #expect(result.strategy == .edges)
        let probed = try ProbedMovie(result.location, countFrames: true)
        #expect(probed.video?.codec_name == "h264" && probed.audio?.codec_name == "aac")
        #expect(abs((probed.videoDuration ?? 0) - 3.6) <= 1.0 / 30 + 0.001)
        #expect(abs((probed.audioDuration ?? 0) - (probed.videoDuration ?? 0)) < 0.05)
        #expect(probed.frameCount == 108)
        // Its first frame is the source's frame at 2.5 s.
        let first = directory.path("first.png"), source = directory.path("source.png")
        try ffmpegFrame(result.location, at: 0, to: first)
        try ffmpegFrame(movie, at: 2.5, to: source)
        #expect(try imageDifference(first, source) < 0.02)
        // Trimmed again, from the trimmed file.
        let again = try await VideoEditor.trim(videoAt: result.location, from: 1, to: 2, saveTo: directory.path("exact.mp4"), mode: .exact)
        #expect(again.location == directory.path("exact-1.mp4"))
        #expect(abs((try ProbedMovie(again.location).videoDuration ?? 0) - 1) <= 1.0 / 30 + 0.001)
        #expect(try Data(contentsOf: URL(fileURLWithPath: movie)) == before)
        #expect(leftovers(directory.url.path).isEmpty)
    }

    /// An exact trim of H.264 from a frame between keyframes to another: only the frames before the
    /// first keyframe in the range and from the last one are encoded; the packets between are the
    /// source's, byte for byte. The source has B-frames (frames stored before frames shown earlier).
    @Test func exactTrimReencodesOnlyTheEdges() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("gop.mp4")
        // Keyframes at 0, 1.5, 3, 4.5, 6 and 7.5 s.
        try makeTimedMovie(movie, seconds: 9, keyframeInterval: 45, preset: "veryfast")
        let before = try Data(contentsOf: URL(fileURLWithPath: movie))
        let result = try await VideoEditor.trim(videoAt: movie, from: 1.2, to: 7.1, saveTo: directory.path("edges.mp4"), mode: .exact)
        #expect(result.strategy == .edges)
        let copied = try #require(result.copiedRange)
        #expect(abs(copied.lowerBound - 1.5) < 0.001 && abs(copied.upperBound - 6) < 0.001)
        let probed = try ProbedMovie(result.location, countFrames: true)
        #expect(probed.video?.codec_name == "h264" && probed.audio?.codec_name == "aac")
        #expect(probed.frameCount == 177)
        #expect(abs((probed.videoDuration ?? 0) - 5.9) <= 1.0 / 30 + 0.001)
        #expect(abs((probed.audioDuration ?? 0) - (probed.videoDuration ?? 0)) < 0.05)
        let decoded = try run(["ffmpeg", "-nostdin", "-v", "error", "-i", result.location, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.output.isEmpty)
        // The first frame is the source's at 1.2 s, the last the source's at 7.0667 s (both re-encoded), and
        // the frames on either side of the copied part's ends are the source's.
        for (time, sourceTime) in [(0, 1.2), (5.9 - 1.0 / 30, 7.1 - 1.0 / 30), (0.3, 1.5), (4.8 - 1.0 / 30, 6 - 1.0 / 30), (4.8, 6)] {
            let trimmedFrame = directory.path("t.png"), sourceFrame = directory.path("s.png")
            try ffmpegFrame(result.location, at: time, to: trimmedFrame)
            try ffmpegFrame(movie, at: sourceTime, to: sourceFrame)
            #expect(try imageDifference(trimmedFrame, sourceFrame) < 0.02, "frame at \(time) s")
        }
        // Every packet of the source between the keyframes is in the copy, in order, byte for byte (a
        // copied keyframe may gain the parameter sets in front); no other packet is the source's.
        let middle = try videoPackets(movie).filter { $0.time >= 1.5 - 0.001 && $0.time < 6 - 0.001 }
        let sourceHashes = Set(try videoPackets(movie).map(\.hash))
        let output = try videoPackets(result.location).map(\.hash)
        #expect(middle.filter { !$0.isKeyframe }.count == 132)
        let outputHashes = Set(output)
        #expect(output.filter { sourceHashes.contains($0) } == middle.filter { !$0.isKeyframe || outputHashes.contains($0.hash) }.map(\.hash))
        // The trimmed file trims again, exactly (its keyframes: 0, 0.3, 1.8, 3.3, 4.8 s).
        let again = try await VideoEditor.trim(videoAt: result.location, from: 0.5, to: 4, saveTo: directory.path("edges.mp4"), mode: .exact)
        #expect(again.location == directory.path("edges-1.mp4") && again.strategy == .edges)
        let probedAgain = try ProbedMovie(again.location, countFrames: true)
        #expect(probedAgain.frameCount == 105)
        #expect(abs((probedAgain.audioDuration ?? 0) - (probedAgain.videoDuration ?? 0)) < 0.05)
        let decodedAgain = try run(["ffmpeg", "-nostdin", "-v", "error", "-i", again.location, "-f", "null", "-"])
        #expect(decodedAgain.status == 0 && decodedAgain.output.isEmpty)
        let first = directory.path("t.png"), sourceFirst = directory.path("s.png")
        try ffmpegFrame(again.location, at: 0, to: first)
        try ffmpegFrame(movie, at: 1.7, to: sourceFirst)
        #expect(try imageDifference(first, sourceFirst) < 0.02)
        // Into Matroska too; a Matroska source's copy into MP4 is re-encoded whole.
        let matroska = try await VideoEditor.trim(videoAt: movie, from: 1.2, to: 7.1, saveTo: directory.path("edges.mkv"), mode: .exact)
        #expect(matroska.strategy == .edges)
        #expect(try ProbedMovie(matroska.location, countFrames: true).frameCount == 177)
        let decodedMatroska = try run(["ffmpeg", "-nostdin", "-v", "error", "-i", matroska.location, "-f", "null", "-"])
        #expect(decodedMatroska.status == 0 && decodedMatroska.output.isEmpty)
        let fromMatroska = try await VideoEditor.trim(videoAt: matroska.location, from: 0.5, to: 1.5, saveTo: directory.path("whole.mp4"), mode: .exact)
        #expect(fromMatroska.strategy == .whole)
        #expect(try ProbedMovie(fromMatroska.location, countFrames: true).frameCount == 30)
        // WebM cannot hold H.264: the whole range is re-encoded (VP8).
        let webm = try await VideoEditor.trim(videoAt: movie, from: 1.2, to: 2.2, saveTo: directory.path("whole.webm"), mode: .exact)
        #expect(webm.strategy == .whole && webm.copiedRange == nil)
        #expect(try ProbedMovie(webm.location, countFrames: true).frameCount == 30)
        #expect(try Data(contentsOf: URL(fileURLWithPath: movie)) == before)
        #expect(leftovers(directory.url.path).isEmpty)
    }

    @Test func keyframeTrimCopiesFromTheKeyframeBefore() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie)
        let result = try await VideoEditor.trim(videoAt: movie, from: 2.5, to: 6, saveTo: directory.path("fast.mp4"), mode: .keyframe)
        #expect(result.strategy == .copy && result.copiedRange == nil)
        let probed = try ProbedMovie(result.location)
        #expect(probed.video?.codec_name == "h264" && probed.audio?.codec_name == "aac")
        // From the keyframe at 2 s to 6 s (within a frame).
        #expect(abs((probed.videoDuration ?? 0) - 4) <= 1.0 / 30 + 0.001)
        #expect(abs((probed.audioDuration ?? 0) - (probed.videoDuration ?? 0)) < 0.05)
        #expect(try firstFrameDifference(result.location, movie, at: 2, in: directory) < 0.02)
        let again = try await VideoEditor.trim(videoAt: result.location, from: 1, to: 3, saveTo: directory.path("again.mkv"), mode: .keyframe)
        #expect(try ProbedMovie(again.location).format.format_name.contains("matroska"))
    }

    /// The keyframe trim used to hang here: starting on a keyframe of a file with a keyframe every 2 s,
    /// the demuxer sends the video from the keyframe before (the range's start is aligned to the sound,
    /// a few ms earlier) — 2 s of video the muxer drops while it waits for sound, which filled the 2 s
    /// queue per stream and blocked the demuxer's only thread. Any file length does it (a 60 s 720p file
    /// trimmed at 10-40 s, this 10 s one at 4-8 s); a keyframe every second did not.
    @Test func keyframeTrimStartingOnAKeyframeFinishesInSync() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("gop2.mp4")
        try makeTimedMovie(movie, keyframeInterval: 60)
        let result = try await VideoEditor.trim(videoAt: movie, from: 4, to: 8, saveTo: directory.path("fast.mp4"), mode: .keyframe)
        let probed = try ProbedMovie(result.location, countFrames: true)
        #expect(probed.video?.codec_name == "h264" && probed.audio?.codec_name == "aac")
        // 4 s of frames from the keyframe at 4 s (the demuxer may also give the frame at the stop time).
        #expect((120...121).contains(probed.frameCount ?? 0))
        #expect(abs((probed.videoDuration ?? 0) - 4) <= 1.0 / 30 + 0.001)
        #expect(abs((probed.audioDuration ?? 0) - (probed.videoDuration ?? 0)) < 0.05)
        #expect(try firstFrameDifference(result.location, movie, at: 4, in: directory) < 0.02)
        // The copy decodes cleanly from start to end.
        let decoded = try run(["ffmpeg", "-nostdin", "-v", "error", "-i", result.location, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.output.isEmpty)
        #expect(leftovers(directory.url.path).isEmpty)
    }

    @Test func badRangesAndFilesAreTypedErrorsAndLeaveNothing() async throws {
        let directory = try TemporaryDirectory()
        let movie = directory.path("timed.mp4")
        try makeTimedMovie(movie, seconds: 2)
        let out = directory.path("out/cut.mp4")
        await #expect(throws: CaptureError.invalidTimeRange(path: movie, from: 1.5, to: 0.5)) {
            _ = try await VideoEditor.trim(videoAt: movie, from: 1.5, to: 0.5, saveTo: out)
        }
        do {
            _ = try await VideoEditor.trim(videoAt: movie, from: 1, to: 9, saveTo: out, mode: .exact)
            Issue.record("trimmed past the end")
        } catch {
            #expect(error.name == "time-out-of-range")
        }
        do {
            _ = try await VideoEditor.trim(videoAt: directory.path("missing.mp4"), from: 0, to: 1, saveTo: out)
            Issue.record("trimmed a missing file")
        } catch {
            #expect(error.name == "not-a-media-file")
        }
        try "file".write(toFile: directory.path("blocker"), atomically: true, encoding: .utf8)
        do {
            _ = try await VideoEditor.trim(videoAt: movie, from: 0, to: 1, saveTo: directory.path("blocker/cut.mp4"))
            Issue.record("wrote under a regular file")
        } catch {
            #expect(error.name == "location-not-writable")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(leftovers(directory.url.path).isEmpty)
    }
}

@Suite("The picker's editing step") struct ImageEditorTests {
    @Test func cropAndScaleReturnOriginalEditedAndRect() async throws {
        let directory = try TemporaryDirectory()
        let image = directory.path("halves.png")
        // Left half red, right half blue.
        #expect(try run(["convert", "-size", "200x100", "xc:red", "-fill", "blue", "-draw", "rectangle 100,0 199,99", image]).status == 0)
        let edit = try await ImageEditor.edit(
            imageAt: image, crop: NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1), size: Size(width: 50, height: 50), codec: .png)
        #expect(edit.originalWidth == 200 && edit.originalHeight == 100)
        #expect(edit.cropRect.x == 100 && edit.cropRect.y == 0 && edit.cropRect.width == 100 && edit.cropRect.height == 100)
        #expect(edit.width == 50 && edit.height == 50)
        let edited = directory.path("edited.png")
        try Data(edit.editedImage).write(to: URL(fileURLWithPath: edited))
        let colour = try run(["convert", edited, "-resize", "1x1!", "-format", "%[fx:int(255*r)] %[fx:int(255*b)]", "info:"]).output
        #expect(colour == "0 255", "the crop kept the blue half: \(colour)")
    }
}
