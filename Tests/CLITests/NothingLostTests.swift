import Capture
import CaptureTestSupport
import Foundation
import Testing

/// What a careless or hostile user does with the release CLI, and what must hold: every file a user
/// gets is whole, no file is reported that is not there, nothing is left behind. Each test is a
/// command of issue 24's list, run as a user would run it, its outcome read with independent tools.
@Suite("nothing lost", .serialized) struct NothingLostTests {
    /// `capture` started in a folder, its standard output into `stdout` there when given.
    private func launch(_ arguments: [String], in directory: String, stdout: String? = nil) throws -> ChildProcess {
        let redirect = stdout.map { " > \"\($0)\"" } ?? ""
        return try ChildProcess(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"\(redirect)", directory, captureBinary] + arguments)
    }

    /// The frames ffprobe decodes in a file (nil when it cannot read it).
    private func decodedFrames(_ path: String) throws -> Int? {
        let result = try tool([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path,
        ])
        return result.status == 0 ? Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
    }

    /// This program's temporary files in a folder (`.capture-PID-UUID.EXT`).
    private func temporaries(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".capture-") }
    }

    // 1. Two processes writing one frames pattern.
    @Test func twoProcessesNumberingOneFramesPatternNeverShareAName() throws {
        let scratch = try Scratch()
        try scratch.write(
            "f.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=frames, kind=frames, max-rate=10, location="\(scratch.file("x"))/%05d.png"
            """)
        let first = try launch(["run", "f.pipeline", "--duration", "2", "--json"], in: scratch.path)
        let second = try launch(["run", "f.pipeline", "--duration", "2", "--json"], in: scratch.path)
        let results = [first.finish(), second.finish()]
        var reported: [String] = []
        for result in results {
            #expect(result.status == 0, "\(result.error)")
            for line in result.output.split(separator: "\n") where line.contains("\"frame-saved\"") {
                guard let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let location = object["location"] as? String
                else { continue }
                reported.append(location)
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.file("x")).filter { $0.hasSuffix(".png") }
        #expect(reported.count >= 4, "\(reported.count) frames reported")
        #expect(Set(reported).count == reported.count, "a name was reported twice")
        #expect(files.count == reported.count, "\(reported.count) reported, \(files.count) on disk")
        #expect(temporaries(scratch.file("x")).isEmpty)
        // Every file a whole PNG (ImageMagick reads it).
        let identify = try tool(["identify", "-format", "%m\n"] + files.sorted().prefix(5).map { scratch.file("x/\($0)") })
        #expect(identify.status == 0 && identify.output.split(separator: "\n").allSatisfy { $0 == "PNG" }, "\(identify.output)")
    }

    // 3. A recording killed in its first second.
    @Test(arguments: [0.1, 0.3, 0.6])
    func aRecordingKilledEarlyLeavesAPlayableFileOrNone(after seconds: Double) async throws {
        let scratch = try Scratch()
        let child = try launch(["record", "-o", "e.mp4", "-i", "test-pattern", "--no-audio", "--size", "320x240"], in: scratch.path)
        try await Task.sleep(for: .seconds(seconds))
        child.signal(SIGKILL)
        _ = child.finish()
        if FileManager.default.fileExists(atPath: scratch.file("e.mp4")) {
            let frames = try decodedFrames(scratch.file("e.mp4"))
            #expect((frames ?? 0) >= 1, "a file under the final name holds no decodable frame (\(frames ?? -1))")
        } else {
            // Nothing under the final name: a rerun to it is not blocked, and the killed run's
            // temporary file is removed by it.
            let rerun = try capture(["record", "-o", "e.mp4", "-i", "test-pattern", "--no-audio", "--duration", "0.5"], in: scratch.path)
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(temporaries(scratch.path).isEmpty, "\(temporaries(scratch.path))")
        }
    }

    // 4. --overwrite killed early, and two --overwrite writers at once.
    @Test func overwriteKilledEarlyKeepsTheOldMovieWhole() async throws {
        let scratch = try Scratch()
        let made = try capture(["record", "-o", "keep.mp4", "-i", "test-pattern", "--no-audio", "--duration", "2", "--size", "320x240"], in: scratch.path)
        #expect(made.status == 0, "\(made.error)")
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.file("keep.mp4")))
        let child = try launch(["record", "--overwrite", "-o", "keep.mp4", "-i", "test-pattern", "--no-audio", "--size", "320x240"], in: scratch.path)
        try await Task.sleep(for: .milliseconds(300))
        child.signal(SIGKILL)
        _ = child.finish()
        let after = try Data(contentsOf: URL(fileURLWithPath: scratch.file("keep.mp4")))
        // Either the old movie, untouched, or a new one that plays: never a stub.
        if after != before {
            #expect((try decodedFrames(scratch.file("keep.mp4")) ?? 0) >= 1, "the old movie was replaced by one that does not play")
        } else {
            #expect(try decodedFrames(scratch.file("keep.mp4")) == 60)
        }
    }

    @Test func twoOverwritersEachKeepTheirOwnFile() throws {
        let scratch = try Scratch()
        let arguments = ["record", "--overwrite", "-o", "keep.mp4", "-i", "test-pattern", "--no-audio", "--size", "320x240", "--duration"]
        let first = try launch(arguments + ["1.5"], in: scratch.path)
        let second = try launch(arguments + ["2"], in: scratch.path)
        let results = [first.finish(), second.finish()]
        var paths: [String] = []
        for result in results {
            #expect(result.status == 0, "\(result.error)")
            // "PATH  DURATION s  BYTES bytes"
            if let path = result.output.components(separatedBy: "  ").first { paths.append(path.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        #expect(Set(paths).count == 2, "both recordings report one file: \(paths)")
        for path in paths {
            let absolute = path.hasPrefix("/") ? path : scratch.file(path)
            #expect((try decodedFrames(absolute) ?? 0) >= 40, "\(path) does not hold its recording")
        }
    }

    // 5. An interrupted `capture photo` keeps its report.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedPhotoRunReportsEveryPhotoItSaved(signal: Int32) async throws {
        let scratch = try Scratch()
        let log = scratch.file("log")
        let child = try launch(
            ["photo", "-i", "test-pattern", "--count", "50", "--interval", "0.2", "--json", "--size", "320x240"], in: scratch.path, stdout: log)
        // Two photos reported in the file: the command runs and writes its lines as it goes.
        try await waitFor("two photos in the log") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2
        }
        child.signal(signal)
        let result = child.finish()
        #expect(result.status == 128 + signal, "\(result.error)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let photos = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".jpg") }
        #expect(lines.count == photos.count && photos.count >= 2 && photos.count < 50, "\(lines.count) lines, \(photos.count) photos")
        #expect(temporaries(scratch.path).isEmpty)
    }

    // 6. The temporary files of an interrupted trim.
    @Test func anInterruptedTrimLeavesNoTemporaryFile() async throws {
        let scratch = try Scratch()
        let made = try capture(
            ["record", "-o", "src.mp4", "-i", "test-pattern", "--audio", "test-tone", "--duration", "6", "--size", "640x480"], in: scratch.path)
        #expect(made.status == 0, "\(made.error)")
        for signal in [SIGINT, SIGTERM, SIGKILL] {
            let child = try launch(["trim", "src.mp4", "--from", "0.5", "--to", "5.5", "--exact", "-o", "cut.mp4"], in: scratch.path)
            // The trim is writing once its first temporary file is there.
            try await waitFor("the trim's temporary file") { !temporaries(scratch.path).isEmpty }
            child.signal(signal)
            let status = child.finish().status
            #expect(status == 128 + signal)
            if signal == SIGKILL {
                // Nothing could remove it then: the next command writing into the folder does.
                #expect(!temporaries(scratch.path).isEmpty)
                let next = try capture(["trim", "src.mp4", "--from", "1", "--to", "2", "-o", "short.mp4"], in: scratch.path)
                #expect(next.status == 0, "\(next.error)")
            }
            #expect(temporaries(scratch.path).isEmpty, "after \(signal): \(temporaries(scratch.path))")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("cut.mp4")))
        }
    }

    // 7. Broken inputs and wrong answers.
    @Test func aTruncatedMovieIsNotSavedToTheLibrary() throws {
        let scratch = try Scratch()
        let source = scratch.file("whole.mp4")
        let made = try tool([
            "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=6", "-c:v", "libx264", "-g", "30",
            "-movflags", "+faststart", source,
        ])
        #expect(made.status == 0, "\(made.output)")
        let size = try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int ?? 0
        let half = scratch.file("half.mp4")
        try Data(contentsOf: URL(fileURLWithPath: source)).prefix(size / 2).write(to: URL(fileURLWithPath: half))
        var environment = ProcessInfo.processInfo.environment
        environment["CAPTURE_PICTURES_DIR"] = scratch.file("Pictures")
        environment["CAPTURE_VIDEOS_DIR"] = scratch.file("Videos")
        let truncated = try ChildProcess([captureBinary, "library", "add", half], environment: environment).finish()
        #expect(truncated.status == 65, "\(truncated.output) \(truncated.error)")
        #expect(truncated.error.contains("truncated"), "\(truncated.error)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: scratch.file("Videos"))) ?? []).filter { !$0.hasPrefix(".") }.isEmpty)
        // The whole file is taken.
        let whole = try ChildProcess([captureBinary, "library", "add", source], environment: environment).finish()
        #expect(whole.status == 0, "\(whole.error)")
    }

    @Test func aThumbnailOfAVariableFrameRateVideoIsTheFrameOnScreen() throws {
        let scratch = try Scratch()
        // Frames every 0.2 s up to 1.8 s, then none until 4.0 s.
        let made = try tool([
            "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=5:duration=4", "-vf",
            "setpts='if(lt(N,10),N*0.2,2+N*0.2)/TB'", "-fps_mode", "vfr", "-c:v", "libx264", "-g", "30", "-bf", "2", scratch.file("vfr.mp4"),
        ])
        #expect(made.status == 0, "\(made.output)")
        for (asked, shown) in [(3.0, 1.8), (1.9, 1.8), (4.0, 4.0), (4.1, 4.0), (0.0, 0.0)] {
            let result = try capture(["thumbnail", "vfr.mp4", "--at", "\(asked)", "--json", "-o", "t-\(asked).jpg"], in: scratch.path)
            #expect(result.status == 0, "\(result.error)")
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            let actual = object?["actual-time"] as? Double ?? -1
            #expect(abs(actual - shown) < 0.001, "at \(asked) s: the frame of \(actual) s, not the one on screen (\(shown) s)")
        }
        // The image is that frame: ffmpeg's frame at 1.8 s and ours for 3.0 s are the same picture.
        #expect(try tool(["ffmpeg", "-v", "error", "-ss", "1.8", "-i", scratch.file("vfr.mp4"), "-frames:v", "1", scratch.file("ref.png")]).status == 0)
        let difference = try tool(["compare", "-metric", "RMSE", scratch.file("t-3.0.jpg"), scratch.file("ref.png"), "null:"])
        let normalized = Double(difference.output.split(separator: "(").last?.split(separator: ")").first ?? "1") ?? 1
        #expect(normalized < 0.05, "\(difference.output)")
    }

    @Test func aThumbnailIsNeverWrittenUnderTheOtherFormatsNameNorEnlarged() throws {
        let scratch = try Scratch()
        let made = try tool([
            "ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=2", "-c:v", "libx264", scratch.file("v.mp4"),
        ])
        #expect(made.status == 0, "\(made.output)")
        let mismatched = try capture(["thumbnail", "v.mp4", "--codec", "png", "-o", "q.jpg"], in: scratch.path)
        #expect(mismatched.status != 0 && mismatched.error.contains("q.jpg"), "\(mismatched.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("q.jpg")))
        let huge = try capture(["thumbnail", "v.mp4", "--size", "100000x100000", "--json", "-o", "big.png"], in: scratch.path)
        #expect(huge.status == 0, "\(huge.error)")
        #expect(try tool(["identify", "-format", "%m %wx%h", scratch.file("big.png")]).output == "PNG 320x240")
    }

    @Test func aJPEGOverlayNamedPNGIsNamedForWhatItIs() throws {
        let scratch = try Scratch()
        #expect(try tool(["convert", "-size", "64x64", "xc:red", "jpeg:\(scratch.file("logo.png"))"]).status == 0)
        try scratch.write(
            "image.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            overlay, output=preview, image="logo.png"
            """)
        let result = try capture(["run", scratch.file("image.pipeline"), "--duration", "1"], in: scratch.path)
        #expect(result.status == 65)
        #expect(result.error.contains("JPEG") && !result.error.contains("out of memory"), "\(result.error)")
    }

    @Test func aStreamThatNeverReachedItsServerIsNotASuccess() throws {
        // A port nobody listens on: bound, then closed.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        close(descriptor)
        let port = UInt16(bigEndian: address.sin_port)
        let result = try capture(["stream", "-i", "test-pattern", "--publish", "rtsp://127.0.0.1:\(port)/live", "--size", "320x240", "--duration", "2"])
        #expect(result.status == 69, "\(result.error)")
        #expect(result.error.contains("never reached") && !result.error.contains("sent 60"), "\(result.error)")
    }
}
