import Foundation
import Testing

/// Overlays through `capture run`: each branch's files decoded by ImageMagick and ffmpeg, the errors
/// of bad overlays, and the keys of a terminal (through a pseudo-terminal).
@Suite struct OverlayCommandTests {
    /// The RGB of a pixel of an image file, as ImageMagick reads it.
    static func rgb(_ path: String, _ x: Int, _ y: Int) throws -> [Int] {
        let result = try tool(["convert", path, "-crop", "1x1+\(x)+\(y)", "-format", "%[fx:int(255*r)] %[fx:int(255*g)] %[fx:int(255*b)]", "info:"])
        return result.output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func near(_ value: [Int], _ expected: [Int]) -> Bool {
        value.count == 3 && zip(value, expected).allSatisfy { abs($0 - $1) <= 40 }
    }

    @Test func eachOverlayIsOnTheOutputsItNamesAndNoOther() throws {
        let scratch = try Scratch()
        try scratch.write(
            "overlays.pipeline",
            """
            session, preset=vga640x480
            input, name=camera, device=test-pattern, pattern=black
            output, name=frames, kind=frames, location="frames/%03d.png", max-rate=5
            output, name=photo, kind=photo, codec=png, location="shot-%02d.png"
            output, name=movie, kind=movie, location="clip.mp4"
            overlay, name=box, output={ frames, movie }, rectangle=< 0.5, 0.5, 0.5, 0.5 >, fill=blue, color=none
            overlay, name=tag, output=photo, text="photo only", color=white, background=red, position=top-left
            start
            start-recording, output=movie
            wait, duration=1
            capture-photo, output=photo
            set-overlay, name=box, fill=green
            wait, duration=1
            stop-recording, output=movie
            stop
            expect, event=recording-finished, count=1
            """)
        let result = try capture(["run", scratch.file("overlays.pipeline")], in: scratch.path)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        // The photo: its tag in the corner, no box.
        #expect(Self.near(try Self.rgb(scratch.file("shot-01.png"), 12, 12), [255, 0, 0]))
        #expect(Self.near(try Self.rgb(scratch.file("shot-01.png"), 480, 360), [0, 0, 0]))
        // The frames: the box (blue, then green after set-overlay), no tag.
        let frames = try FileManager.default.contentsOfDirectory(atPath: scratch.file("frames")).sorted()
        #expect(frames.count >= 4)
        let first = scratch.file("frames/" + frames[0]), last = scratch.file("frames/" + frames[frames.count - 1])
        #expect(Self.near(try Self.rgb(first, 480, 360), [0, 0, 255]))
        #expect(Self.near(try Self.rgb(last, 480, 360), [0, 255, 0]))
        #expect(Self.near(try Self.rgb(first, 12, 12), [0, 0, 0]))
        // The movie, decoded by ffmpeg: the box, blue at the start.
        let decoded = scratch.file("movie-first.png")
        let ffmpeg = try tool(["ffmpeg", "-v", "error", "-i", scratch.file("clip.mp4"), "-frames:v", "1", decoded])
        #expect(ffmpeg.status == 0, "\(ffmpeg.output)")
        #expect(Self.near(try Self.rgb(decoded, 480, 360), [0, 0, 255]))
        #expect(Self.near(try Self.rgb(decoded, 12, 12), [0, 0, 0]))
    }

    @Test func badOverlaysAreTypedErrorsWithTheirLine() throws {
        let scratch = try Scratch()
        try scratch.write(
            "font.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            overlay, output=preview, text="x", font="No Such Font Family"
            """)
        let font = try capture(["run", scratch.file("font.pipeline"), "--duration", "1"], in: scratch.path)
        #expect(font.status == 69)
        #expect(font.error.contains("line 3: overlay failed: unknown-font") && font.error.contains("'No Such Font Family'"), "\(font.error)")
        try scratch.write(
            "image.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=preview, kind=preview, sink=none
            overlay, output=preview, image="missing.png"
            """)
        let image = try capture(["run", scratch.file("image.pipeline"), "--duration", "1"], in: scratch.path)
        #expect(image.status == 65)
        #expect(image.error.contains("missing.png") && image.error.contains("no such file"), "\(image.error)")
        // Caught before anything runs: a point out of the frame, an overlay on a metadata output.
        try scratch.write(
            "values.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=codes, kind=metadata
            overlay, output=codes, text="x", position=< 1.5, 0 >
            """)
        let values = try capture(["validate", scratch.file("values.pipeline")])
        #expect(values.status == 65)
        #expect(values.error.contains("values.pipeline:3:"), "\(values.error)")
        #expect(values.error.contains("position must be one of"), "\(values.error)")
        #expect(values.error.contains("'codes' is a metadata output"), "\(values.error)")
    }

    /// The keys of `capture run` on a terminal, through a pseudo-terminal driven by Python's pty module.
    @Test func keysTakePhotosAndToggleTheFlashOnATerminal() throws {
        let scratch = try Scratch()
        try scratch.write(
            "keys.pipeline",
            """
            session, preset=cif352x288
            input, name=rear, device=test-pattern
            output, name=preview, kind=preview, sink=none
            output, name=photo, kind=photo, location="key-%02d.jpg"
            overlay, name=flash, output=preview, text="Flash {flash-mode}"
            """)
        try scratch.write(
            "drive.py",
            """
            import os, pty, select, sys, time
            binary, pipeline = sys.argv[1:3]
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(os.path.dirname(pipeline))  # where its photos go
                os.execv(binary, [binary, 'run', pipeline, '--duration', '60'])
            seen = b''
            def wait_for(text, limit=30):
                global seen
                end = time.time() + limit
                while text not in seen and time.time() < end:
                    ready, _, _ = select.select([fd], [], [], 0.5)
                    if ready:
                        try:
                            seen += os.read(fd, 4096)
                        except OSError:
                            break
                return text in seen
            steps = [wait_for(b'keys: space photo')]
            steps.append(wait_for(b'session-started'))
            os.write(fd, b' ')
            steps.append(wait_for(b'photo-saved'))
            os.write(fd, b'f')
            steps.append(wait_for(b'flash mode: auto'))
            os.write(fd, b'q')
            steps.append(wait_for(b'session-stopped'))
            _, status = os.waitpid(pid, 0)
            print(' '.join('yes' if step else 'no' for step in steps), os.waitstatus_to_exitcode(status))
            """)
        let result = try tool(["/usr/bin/python3", scratch.file("drive.py"), captureBinary, scratch.file("keys.pipeline")])
        #expect(result.output.hasPrefix("yes yes yes yes yes 0"), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: scratch.file("key-01.jpg")))
    }
}
