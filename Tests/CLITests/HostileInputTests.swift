import Capture
import CaptureTestSupport
import Foundation
import Testing

/// What a careless or hostile user typed must never lose data, crash, or act as code: each case is a
/// command a user could run, with the outcome they should see.
@Suite struct HostileInputTests {
    /// `record --overwrite` at a device or a pipe refuses at once: /dev/null stays, nothing hangs.
    @Test func recordingRefusesDevicesAndPipes() throws {
        let scratch = try Scratch()
        let devNull = try capture(["record", "-i", "test-pattern", "--no-audio", "-o", "/dev/null", "--overwrite", "--duration", "1"], in: scratch.path)
        #expect(devNull.status == 1 && devNull.error.contains("it is a device"), "\(devNull.error)")
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR, "/dev/null is still the device")
        #expect(mkfifo(scratch.file("fifo"), 0o644) == 0)
        let fifo = try capture(["record", "-i", "test-pattern", "--no-audio", "-o", "fifo", "--overwrite", "--duration", "1"], in: scratch.path)
        #expect(fifo.status == 1 && fifo.error.contains("it is a pipe"), "\(fifo.error)")
    }

    /// Overwriting a regular file the user named works, and a recording that writes nothing never
    /// removes a file it did not create.
    @Test func overwritingKeepsTheUsersFileWhenNothingIsWritten() throws {
        let scratch = try Scratch()
        try scratch.write("mine.mp4", "not a movie, but the user's file")
        let result = try capture(["record", "-i", "test-pattern", "--no-audio", "-o", "mine.mp4", "--overwrite", "--duration", "1"], in: scratch.path)
        #expect(result.status == 0, "\(result.error)")
        #expect(try probe(scratch.file("mine.mp4")).streams == ["h264"])
    }

    /// A location is never a printf format: %s, %n, %x, several directives or absurd widths are
    /// refused with the location named, by `validate` and by `run`, before anything runs.
    @Test func locationsAreNeverFormats() throws {
        let scratch = try Scratch()
        for location in ["p/%s%d.png", "p/%n%d.png", "p/%d%x%x%x.png", "p/%99999999999d.png", "p/%d/%d.png", "p%d/x.png", "p/none.png"] {
            try scratch.write("f.pipeline", "input, name=c, device=test-pattern\noutput, name=f, kind=frames, max-rate=5, location=\"\(location)\"\n")
            for command in ["validate", "run"] {
                let result = try capture([command, scratch.file("f.pipeline")], in: scratch.path)
                #expect(result.status == 65, "\(command) \(location): \(result.status) \(result.error)")
                #expect(result.error.contains("cannot be used") || result.error.contains("needs a %d-style pattern"), "\(command) \(location): \(result.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: scratch.file("p")), "nothing was written")
        for location in ["", "ph/", "/dev/null", "ph/%99999999999d.jpg", "ph/x%s.jpg"] {
            let photo = try capture(["photo", "-i", "test-pattern", "-o", location], in: scratch.path)
            #expect(photo.status == 1 && photo.error.contains("cannot be used"), "photo -o '\(location)': \(photo.error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["f.pipeline"])
    }

    /// Two runs into one folder number on: the second adds files, the first run's files stay.
    @Test func aSecondRunDoesNotOverwriteTheFirstRunsFrames() throws {
        let scratch = try Scratch()
        try scratch.write("f.pipeline", "input, name=c, device=test-pattern\noutput, name=f, kind=frames, max-rate=10, location=\"img_%03d.jpg\"\n")
        #expect(try capture(["run", scratch.file("f.pipeline"), "--duration", "1"], in: scratch.path).status == 0)
        let first = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("img_") }.sorted()
        let sizes = try first.map { try FileManager.default.attributesOfItem(atPath: scratch.file($0))[.modificationDate] as? Date }
        #expect(first.count >= 5)
        #expect(try capture(["run", scratch.file("f.pipeline"), "--duration", "1"], in: scratch.path).status == 0)
        let after = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("img_") }.sorted()
        #expect(after.count >= first.count + 5, "\(first.count) then \(after.count)")
        #expect(try first.map { try FileManager.default.attributesOfItem(atPath: scratch.file($0))[.modificationDate] as? Date } == sizes,
                "the first run's files were not touched")
    }

    /// A movie larger than its camera's frames is refused (upscaling), not recorded into a broken file
    /// reported as complete.
    @Test func anOversizedMovieIsRefused() throws {
        let scratch = try Scratch()
        let result = try capture(["record", "-i", "test-pattern", "--no-audio", "--size", "16384x16384", "--duration", "1", "-o", "big.mp4"], in: scratch.path)
        #expect(result.status == 1 && result.error.contains("upscaling is refused"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("big.mp4")))
    }
}
