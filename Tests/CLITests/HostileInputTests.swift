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
        #expect(devNull.status == 65 && devNull.error.contains("it is a device"), "\(devNull.error)")
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR, "/dev/null is still the device")
        #expect(mkfifo(scratch.file("fifo"), 0o644) == 0)
        let fifo = try capture(["record", "-i", "test-pattern", "--no-audio", "-o", "fifo", "--overwrite", "--duration", "1"], in: scratch.path)
        #expect(fifo.status == 65 && fifo.error.contains("it is a pipe"), "\(fifo.error)")
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
            #expect(photo.status == 65 && photo.error.contains("cannot be used"), "photo -o '\(location)': \(photo.error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["f.pipeline"])
    }

    /// A '%' followed by a combining mark is one character that is not "%", yet printf would read the
    /// '%': the check looks at bytes. `..` names a folder.
    @Test func aPercentHiddenInACharacterIsStillRefused() throws {
        let scratch = try Scratch()
        for location in ["ph/%\u{301}d.jpg", "ph/x%\u{301}s.jpg", "ph/.."] {
            let photo = try capture(["photo", "-i", "test-pattern", "-o", location], in: scratch.path)
            #expect(photo.status == 65 && photo.error.contains("cannot be used"), "photo -o '\(location)': \(photo.error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    /// What a user typed never reaches the terminal raw: a newline or an escape sequence in an
    /// option's value, a `--set` override or a `.pipeline` file comes back escaped, and every message
    /// stays on its lines.
    @Test func controlCharactersComeBackEscaped() throws {
        let scratch = try Scratch()
        let size = try capture(["record", "-o", "x.mp4", "--size", "12\nforged line"], in: scratch.path)
        #expect(size.status == 64 && size.error.contains("'12\\nforged line'") && !size.error.contains("\nforged"), "\(size.error)")
        let location = try capture(["photo", "-i", "test-pattern", "-o", "dir\u{1B}[31m/"], in: scratch.path)
        #expect(location.status == 65 && location.error.contains("\\u{1b}[31m") && !location.error.contains("\u{1B}"), "\(location.error)")
        try scratch.write("c.pipeline", "input, name=camera, device=test-pattern\noutput, name=p, kind=preview, sink=none\nwait, duration=\"1\u{1B}[2J\"\n")
        let file = try capture(["validate", scratch.file("c.pipeline")])
        #expect(file.status == 65 && !file.error.contains("\u{1B}") && file.error.contains("\\u{1b}[2J"), "\(file.error)")
        let override = try capture(["validate", scratch.file("c.pipeline"), "--set", "camera.pattern=ball\nstart"])
        #expect(override.status == 65 && override.error.contains("--set:1:20: error: control character U+000A in the override"), "\(override.error)")
    }

    /// The reader and every command's options take generated and mutated inputs (the soak target feeds
    /// a million; this is the short run): each answer is a document that writes back to itself, located
    /// printable diagnostics, options, or a printable usage error, and hostile locations are refused.
    @Test func fuzzingTheReaderAndTheOptions() throws {
        let scratch = try Scratch()
        let result = try capture(["soak", "--fuzz", "40000", "--seeds", packageRoot + "/Pipelines", "--output-dir", scratch.path])
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(result.output.contains("fuzz: 40000 inputs") && result.output.contains("fuzz: passed"), "\(result.output)")
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
        #expect(
            try first.map { try FileManager.default.attributesOfItem(atPath: scratch.file($0))[.modificationDate] as? Date } == sizes,
            "the first run's files were not touched")
    }

    /// A movie larger than its camera's frames is refused (upscaling), not recorded into a broken file
    /// reported as complete.
    @Test func anOversizedMovieIsRefused() throws {
        let scratch = try Scratch()
        let result = try capture(["record", "-i", "test-pattern", "--no-audio", "--size", "16384x16384", "--duration", "1", "-o", "big.mp4"], in: scratch.path)
        #expect(result.status == 65 && result.error.contains("upscaling is refused"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("big.mp4")))
    }

    /// Numbers that do not fit, control characters and bytes that are not UTF-8 get a clear answer.
    @Test func oddValuesGetClearAnswers() throws {
        let scratch = try Scratch()
        let interval = try capture(["photo", "-i", "test-pattern", "--count", "2", "--interval", "1e308", "-o", "p.jpg"], in: scratch.path)
        #expect(interval.status == 64 && interval.error.contains("up to"), "\(interval.error)")
        // A newline in a --set value cannot forge an event line in the readable output.
        try scratch.write(
            "n.pipeline",
            "input, name=c, device=test-pattern\noutput, name=p, kind=photo\nstart\ncapture-photo, output=p, location=\"a.jpg\"\nwait, event=photo-saved\nstop\n"
        )
        let forged = try capture(["run", scratch.file("n.pipeline"), "--set", "p.location=x\n   9.999  session-stopped.jpg"], in: scratch.path)
        #expect(!forged.output.split(separator: "\n").contains { $0.hasPrefix("   9.999") }, "\(forged.output)")
        // Not UTF-8: refused, not turned into another name.
        let raw = try tool(["sh", "-c", "\"$0\" photo -i test-pattern -o \"$(printf 'ph\\377.jpg')\"; echo \"status=$?\"", captureBinary])
        #expect(raw.output.contains("status=64"), "\(raw.output)")
    }

    /// A file input that is not a media file says so, with the data-error exit.
    @Test func notAMediaFileSaysSo() throws {
        let scratch = try Scratch()
        try scratch.write("text.mp4", "hello")
        try scratch.write("empty.mp4", "")
        for path in ["/etc/passwd", scratch.file("text.mp4"), scratch.file("empty.mp4"), scratch.path, "/dev/zero"] {
            let result = try capture(["scan", "-i", "file:\(path)", "--timeout", "1"], in: scratch.path)
            #expect(result.status == 65 && result.error.contains("is not a media file"), "\(path): \(result.status) \(result.error)")
        }
    }

    /// Files that are not .pipeline files, empty files and huge files get an answer at once.
    @Test func oddPipelineFiles() throws {
        let scratch = try Scratch()
        try scratch.write("empty.pipeline", "")
        for (path, words) in [(scratch.file("empty.pipeline"), "declares no input"), (scratch.path, "is a directory"), ("/dev/zero", "is a device")] {
            for command in ["validate", "run"] {
                let result = try capture([command, path], in: scratch.path)
                #expect(result.status == 65 && result.error.contains(words), "\(command) \(path): \(result.status) \(result.error)")
            }
        }
        // 100,000 lines (1.7 MB): refused by its size, quickly, with one line of diagnostics.
        try scratch.write("huge.pipeline", String(repeating: "wait, duration=0\n", count: 100_000))
        let started = ContinuousClock.now
        let huge = try capture(["validate", scratch.file("huge.pipeline")], in: scratch.path)
        #expect(huge.status == 65 && huge.error.contains("a .pipeline file may have at most"), "\(huge.error.prefix(300))")
        #expect(ContinuousClock.now - started < .seconds(10))
        // 30,000 short lines (comments): refused by their number.
        try scratch.write("long.pipeline", "input, name=c, device=test-pattern\n" + String(repeating: "#\n", count: 30_000))
        let long = try capture(["validate", scratch.file("long.pipeline")], in: scratch.path)
        #expect(long.status == 65 && long.error.contains("lines; a .pipeline file may have at most 20000"), "\(long.error.prefix(300))")
        // 2,000 unknown statements: the first 50 diagnostics, then a count.
        try scratch.write("unknown.pipeline", "input, name=c, device=test-pattern\n" + String(repeating: "bogus, a=1\n", count: 2_000))
        let unknown = try capture(["validate", scratch.file("unknown.pipeline")], in: scratch.path)
        #expect(unknown.status == 65 && unknown.error.contains("... and 1950 more errors not shown"), "\(unknown.error.suffix(200))")
        #expect(unknown.error.split(separator: "\n").count < 200)
        // A 64-bit integer type prefix, as the format document lists it.
        try scratch.write("q.pipeline", "input, name=c, device=test-pattern\noutput, name=p, kind=photo, quality=(int64)90\n")
        #expect(try capture(["validate", scratch.file("q.pipeline")], in: scratch.path).status == 0)
    }

    /// A video device given as the microphone (or a microphone as the camera) is refused, not
    /// recorded silently.
    @Test func devicesOfTheWrongKindAreRefused() throws {
        let scratch = try Scratch()
        let audio = try capture(["record", "-i", "test-pattern", "--audio", "test-pattern", "-o", "a.mp4", "--duration", "1"], in: scratch.path)
        #expect(audio.status == 65 && audio.error.contains("captures video, not audio"), "\(audio.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("a.mp4")))
    }
}

/// `capture soak` (the long run of `make soak`), two cycles: every step keeps its deadline, every
/// movie decodes, each cycle is sampled.
@Suite struct SoakCommandTests {
    /// SIGTERM while the session is in the middle of configuration commits (outputs added and removed
    /// in a loop beside a recording): the run stops gracefully and says so, nothing hangs, and the
    /// movie decodes to its end.
    @Test(arguments: [0.6, 1.1, 1.7, 2.3])
    func sigtermDuringCommitsStopsCleanly(after delay: Double) async throws {
        let scratch = try Scratch()
        try scratch.write(
            "commits.pipeline",
            """
            session, preset=cif352x288
            input, name=camera, device=test-pattern
            input, name=mic, device=test-tone
            output, name=movie, kind=movie, location="take.mp4"
            start
            start-recording, output=movie
            repeat, count=200, actions={ "begin-configuration", "add-output, name=extra, kind=frames", "add-output, name=still, kind=photo", "commit-configuration", "begin-configuration", "remove-output, name=extra", "remove-output, name=still", "commit-configuration" }
            stop-recording, output=movie
            """)
        let child = try ChildProcess([captureBinary, "run", scratch.file("commits.pipeline"), "--json", "--output-dir", scratch.path])
        try await Task.sleep(for: .seconds(delay))
        child.signal(SIGTERM)
        let started = ContinuousClock.now
        let result = child.finish()
        #expect(ContinuousClock.now - started < .seconds(20), "the run ended soon after SIGTERM")
        #expect(result.status == 0, "\(result.status): \(result.error)")
        #expect(result.output.contains("\"configuration-committed\""), "commits were under way: \(result.output.suffix(400))")
        #expect(result.output.contains("\"recording-finished\"") && result.output.contains("\"session-stopped\""), "\(result.output.suffix(600))")
        let movie = try probe(scratch.file("take.mp4"))
        #expect(movie.streams.sorted() == ["aac", "h264"] && movie.duration > 0.2, "\(movie)")
        let decoded = try tool(["ffmpeg", "-v", "error", "-i", scratch.file("take.mp4"), "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.output.isEmpty, "\(decoded.output)")
    }

    /// A folder made read-only while a movie records into it, once the file has its name: the open
    /// file is finished and plays; the next recording there is refused with an error naming the
    /// folder. Root ignores permissions, so as root the commands run as `nobody` (setpriv).
    @Test(.enabled(if: canRunAsUnprivileged, "needs to run capture as a user the permissions apply to"))
    func aFolderMadeReadOnlyMidRecording() async throws {
        let scratch = try Scratch()
        let folder = scratch.file("takes"), cache = scratch.file("cache")
        for path in [folder, cache] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        if getuid() == 0 { for path in [scratch.path, folder, cache] { #expect(chown(path, 65534, 65534) == 0) } }
        let first = try ChildProcess(
            unprivileged(["record", "-i", "test-pattern", "--audio", "test-tone", "-o", folder + "/take.mp4", "--duration", "3"]),
            environment: unprivilegedEnvironment(cache: cache))
        // The name is given once the file holds a whole frame (its first fragment).
        // Bounded at 120 s: an unprivileged run first builds its own GStreamer registry.
        try await waitFor("take.mp4 to be published", timeout: .seconds(120)) { FileManager.default.fileExists(atPath: folder + "/take.mp4") }
        #expect(chmod(folder, 0o555) == 0)
        let result = first.finish()
        #expect(result.status == 0, "\(result.error)")
        let movie = try probe(folder + "/take.mp4")
        #expect(movie.streams.sorted() == ["aac", "h264"] && abs(movie.duration - 3) < 0.3, "\(movie)")
        let second = try ChildProcess(
            unprivileged(["record", "-i", "test-pattern", "--no-audio", "-o", folder + "/take2.mp4", "--duration", "1"]),
            environment: unprivilegedEnvironment(cache: cache)
        ).finish()
        #expect(
            second.status != 0 && second.error.contains(folder) && second.error.lowercased().contains("permission denied"), "\(second.status) \(second.error)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/take2.mp4"))
        #expect(chmod(folder, 0o755) == 0)
    }

    /// A folder made read-only before the recording could give its file a name: nothing is lost. The
    /// recording goes on under its temporary name, fails saying its name could not be given and where
    /// what it recorded is kept, and that file plays; a later run in the folder (writable again) does
    /// not take it for a stale temporary.
    @Test(.enabled(if: canRunAsUnprivileged, "needs to run capture as a user the permissions apply to"))
    func aFolderMadeReadOnlyBeforeTheFileHasItsName() async throws {
        let scratch = try Scratch()
        let folder = scratch.file("takes"), cache = scratch.file("cache")
        for path in [folder, cache] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        if getuid() == 0 { for path in [scratch.path, folder, cache] { #expect(chown(path, 65534, 65534) == 0) } }
        let temporaries = { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(".capture-") } }
        let first = try ChildProcess(
            unprivileged(["record", "-i", "test-pattern", "--no-audio", "-o", folder + "/take.mp4", "--duration", "2"]),
            environment: unprivilegedEnvironment(cache: cache))
        // The temporary file is made when the recording starts, before any frame reaches it.
        try await waitFor("the recording's temporary file", timeout: .seconds(120)) { !temporaries().isEmpty }
        #expect(chmod(folder, 0o555) == 0)
        let result = first.finish()
        #expect(chmod(folder, 0o755) == 0)
        #expect(result.status == 1, "\(result.status) \(result.error)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/take.mp4"))
        let kept = temporaries()
        #expect(kept.count == 1, "\(kept)")
        guard let name = kept.first else { return }
        #expect(result.error.contains("could not be given its name") && result.error.contains(name), "\(result.error)")
        #expect(result.error.lowercased().contains("permission denied"), "\(result.error)")
        let movie = try probe(folder + "/" + name)
        #expect(movie.streams == ["h264"] && movie.duration > 1.5, "\(movie)")
        // A later recording into the folder sweeps stale temporaries: not this one.
        let second = try ChildProcess(
            unprivileged(["record", "-i", "test-pattern", "--no-audio", "-o", folder + "/take2.mp4", "--duration", "1"]),
            environment: unprivilegedEnvironment(cache: cache)
        ).finish()
        #expect(second.status == 0, "\(second.error)")
        #expect(FileManager.default.fileExists(atPath: folder + "/" + name))
    }

    /// The long recording's check, a few seconds long: no frame lost or missing, audio and video
    /// timelines within a frame of each other, photos beside it, and the file measured again by --measure.
    @Test func aShortRecordingSoakPassesAndItsFileMeasuresTheSame() throws {
        let scratch = try Scratch()
        let result = try capture(["soak", "--recording", "4", "--photo-interval", "1", "--output-dir", "out", "--json", "report.json"], in: scratch.path)
        #expect(result.status == 0 && result.output.contains("soak: passed"), "\(result.output)\(result.error)")
        #expect(result.output.contains("dropped by the framework: none") && result.output.contains("(0 missing"), "\(result.output)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.file("report.json")))) as? [String: Any])
        #expect((report["photos"] as? Int ?? 0) >= 3 && (report["drift"] as? Double ?? 1) < 1.0 / 30, "\(report)")
        let measured = try capture(["soak", "--measure", scratch.file("out/recording-1.mp4")])
        #expect(measured.status == 0 && measured.output.contains("measure: passed"), "\(measured.output)\(measured.error)")
    }

    @Test func twoCyclesRunAndReport() throws {
        let scratch = try Scratch()
        let result = try capture(["soak", "--cycles", "2", "--output-dir", "out", "--json", "report.json"], in: scratch.path)
        #expect(result.output.contains("cycles: 2 of 2; photos 4, movies 2 (0 do not decode), camera switches 2"), "\(result.output)\(result.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.file("report.json")))) as? [String: Any])
        #expect((report["failures"] as? [Any])?.isEmpty == true)
        #expect((report["brokenMovies"] as? [Any])?.isEmpty == true)
        #expect((report["samples"] as? [[String: Any]])?.count == 2)
        #expect(try tool(["identify", "-format", "%m", scratch.file("out/photo_2b.jpg")]).output == "JPEG")
    }
}

/// As root, commands run as `nobody` so that file permissions apply; true when that user can run the binary.
let canRunAsUnprivileged: Bool = {
    guard getuid() == 0 else { return true }
    return (try? ChildProcess(unprivileged(["--version"])).finish().status) == 0
}()

/// The command line of `capture ARGUMENTS`, as `nobody` when this process is root.
func unprivileged(_ arguments: [String]) -> [String] {
    (getuid() == 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []) + [captureBinary] + arguments
}

/// The environment with a GStreamer registry cache the unprivileged user can write.
func unprivilegedEnvironment(cache: String) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = cache
    environment["XDG_CACHE_HOME"] = cache
    return environment
}
