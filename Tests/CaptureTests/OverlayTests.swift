import CaptureTestSupport
import Foundation
import GStreamer
import Testing

@testable import Capture

/// The premultiplied BGRA pixel of a picture at (x, y) of the picture.
private func pixel(_ picture: OverlayPicture, _ x: Int, _ y: Int) -> (b: Int, g: Int, r: Int, a: Int) {
    let at = y * picture.stride + x * 4
    return (Int(picture.pixels[at]), Int(picture.pixels[at + 1]), Int(picture.pixels[at + 2]), Int(picture.pixels[at + 3]))
}

/// Overlays drawn by the renderer alone (no pipeline): placement, colours, alpha, and bad values.
@Suite struct OverlayRendererTests {
    @Test func aTextSitsInItsCornerOnItsBox() throws {
        let overlay = CaptureOverlay(
            name: "label", content: .text("Flash: Auto", style: .init(size: 0.05, color: .white, background: .red)),
            position: .bottomRight)
        let prepared = try OverlayRenderer.prepare(overlay)
        let picture = try #require(OverlayRenderer.render(prepared, width: 640, height: 480))
        // A line 5% of 480 high, padded, placed 2% (10 px) from the bottom-right corner.
        #expect(picture.height >= 24 && picture.height <= 60)
        #expect(picture.x + picture.width == 640 - 10 && picture.y + picture.height == 480 - 10)
        let corner = pixel(picture, 0, 0)
        #expect(corner.r == 255 && corner.g == 0 && corner.b == 0 && corner.a == 255)
        // Some pixels of the text are white (drawn over the red box).
        var white = 0
        for y in 0..<picture.height { for x in 0..<picture.width where pixel(picture, x, y) == (255, 255, 255, 255) { white += 1 } }
        #expect(white > 20)
    }

    @Test func thePositionsAndPointsPlaceThePicture() {
        #expect(OverlayRenderer.place(.topLeft, width: 100, height: 50, frameWidth: 1280, frameHeight: 720) == (14, 14))
        #expect(OverlayRenderer.place(.center, width: 100, height: 50, frameWidth: 1280, frameHeight: 720) == (590, 335))
        #expect(OverlayRenderer.place(.top, width: 100, height: 50, frameWidth: 1280, frameHeight: 720) == (590, 14))
        #expect(OverlayRenderer.place(.point(x: 0.5, y: 0.25), width: 100, height: 50, frameWidth: 1280, frameHeight: 720) == (640, 180))
    }

    @Test func aPNGsAlphaIsKept() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("half-blue.png")
        // 40x20, blue at half opacity: premultiplied BGRA is (128, 0, 0, 128).
        let made = try run(["convert", "-size", "40x20", "xc:rgba(0,0,255,0.5)", "PNG32:" + path])
        #expect(made.status == 0, "\(made.output)")
        let overlay = CaptureOverlay(name: "logo", content: .image(path: path), position: .point(x: 0.5, y: 0.5), opacity: 1)
        let picture = try #require(OverlayRenderer.render(try OverlayRenderer.prepare(overlay), width: 320, height: 240))
        #expect(picture.width == 40 && picture.height == 20 && picture.x == 160 && picture.y == 120)
        let value = pixel(picture, 10, 10)
        #expect(abs(value.b - 128) <= 2 && value.g == 0 && value.r == 0 && abs(value.a - 128) <= 2)
        // Scaled to a quarter of the frame's width: 80x40.
        let scaled = try #require(
            OverlayRenderer.render(
                try OverlayRenderer.prepare(
                    CaptureOverlay(name: "logo", content: .image(path: path, width: 0.25))), width: 320, height: 240))
        #expect(scaled.width == 80 && scaled.height == 40)
    }

    @Test func shapesArePlacedByTheirPoints() throws {
        let overlay = CaptureOverlay(
            name: "box",
            content: .shapes(
                [.rectangle(NormalizedRect(x: 0.25, y: 0.25, width: 0.5, height: 0.5))],
                style: .init(stroke: nil, fill: .green)))
        let picture = try #require(OverlayRenderer.render(try OverlayRenderer.prepare(overlay), width: 400, height: 200))
        // The box covers x 100...300, y 50...150 (plus a pixel of margin).
        #expect(abs(picture.x - 100) <= 2 && abs(picture.y - 50) <= 2 && abs(picture.width - 200) <= 4 && abs(picture.height - 100) <= 4)
        let inside = pixel(picture, picture.width / 2, picture.height / 2)
        #expect(inside.g == 255 && inside.r == 0 && inside.a == 255)
    }

    @Test func aClockShowsTheFramesRunningTime() {
        #expect(ClockText.text(.running, at: Date(), runningTime: 62_133_000_000) == "0:01:02.133")
        let text = ClockText.text(.milliseconds, at: Date(timeIntervalSince1970: 1_000_000.25), runningTime: nil)
        #expect(text.hasSuffix(".250") && text.count == 12)
    }

    @Test func badValuesAreTypedErrorsNamingTheOverlay() throws {
        func error(_ overlay: CaptureOverlay) -> CaptureError? {
            do { try overlay.validate(); return nil } catch { return error }
        }
        #expect(error(CaptureOverlay(name: "t", content: .text("x", style: .init(font: "No Such Font Family 42")))).map(\.name) == "unknown-font")
        #expect(error(CaptureOverlay(name: "t", content: .text("x", style: .init(font: "DejaVu Sans Bold")))) == nil)
        #expect(error(CaptureOverlay(name: "t", content: .text("x", style: .init(font: "Monospace")))) == nil)
        #expect(
            error(CaptureOverlay(name: "i", content: .image(path: "/nonexistent/logo.png")))
                == .overlayImageUnreadable(overlay: "i", path: "/nonexistent/logo.png", reason: "no such file"))
        let directory = try TemporaryDirectory()
        let notPNG = directory.path("not.png")
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: notPNG))
        #expect(error(CaptureOverlay(name: "i", content: .image(path: notPNG))).map(\.name) == "overlay-image-unreadable")
        #expect(error(CaptureOverlay(name: "p", content: .text("x"), position: .point(x: 1.5, y: 0))).map(\.name) == "invalid-overlay")
        #expect(error(CaptureOverlay(name: "o", content: .text("x"), opacity: 2)).map(\.name) == "invalid-overlay")
        #expect(
            error(CaptureOverlay(name: "s", content: .shapes([.polygon([NormalizedPoint(x: 0, y: 0), NormalizedPoint(x: 1, y: 1)])]))).map(\.name)
                == "invalid-overlay")
        #expect(error(CaptureOverlay(name: "s", content: .text("x", style: .init(size: 0)))).map(\.name) == "invalid-overlay")
        #expect(OverlayColor(parsing: "#ff000080") == OverlayColor(red: 1, green: 0, blue: 0, alpha: 128.0 / 255))
        #expect(OverlayColor(parsing: "#ff00") == nil && OverlayColor(parsing: "Yellow") == .yellow)
    }
}

/// Overlays on a running session: on the outputs they are added to and on no other, changed live.
@Suite(.serialized) struct OverlaySessionTests {
    /// The RGB of a frame at a point given as fractions of its size.
    static func rgb(_ frame: VideoFrame, _ fx: Double, _ fy: Double) -> (Int, Int, Int) {
        let value = frame.pixel(x: Int(Double(frame.width) * fx), y: Int(Double(frame.height) * fy))
        return (Int(value[0]), Int(value[1]), Int(value[2]))
    }

    static func isColour(_ value: (Int, Int, Int), _ expected: (Int, Int, Int)) -> Bool {
        abs(value.0 - expected.0) <= 40 && abs(value.1 - expected.1) <= 40 && abs(value.2 - expected.2) <= 40
    }

    @Test func anOverlayIsOnItsOutputOnlyAndChangesWithinAFewFrames() async throws {
        let directory = try TemporaryDirectory()
        let (session, _) = try makeSession(preset: .vga640x480, pattern: "black")
        let marked = CaptureVideoDataOutput(name: "marked")
        marked.pixelFormat = "RGBx"
        let plain = CaptureVideoDataOutput(name: "plain")
        plain.pixelFormat = "RGBx"
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(marked)
        try session.addOutput(plain)
        try session.addOutput(photo)
        let box = CaptureOverlay(
            name: "box",
            content: .shapes(
                [.rectangle(NormalizedRect(x: 0.1, y: 0.1, width: 0.3, height: 0.3))],
                style: .init(stroke: nil, fill: .red)))
        try marked.addOverlay(box)
        let markedFrames = marked.frames()
        try await session.startRunning()

        var iterator = markedFrames.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(Self.isColour(Self.rgb(first, 0.25, 0.25), (255, 0, 0)))
        #expect(Self.isColour(Self.rgb(first, 0.75, 0.75), (0, 0, 0)))
        let other = try #require(await firstFrame(plain))
        #expect(Self.isColour(Self.rgb(other, 0.25, 0.25), (0, 0, 0)))
        let before = try await photo.capturePhoto(with: PhotoSettings(codec: .png, location: directory.path("before.png")))
        #expect(Self.isColour(try DecodedImage(try #require(before.location)).rgb(160, 120), (0, 0, 0)))

        // A change on the running session: the box turns green within a few frames.
        try marked.updateOverlay(named: "box") {
            $0.content = .shapes(
                [.rectangle(NormalizedRect(x: 0.1, y: 0.1, width: 0.3, height: 0.3))],
                style: .init(stroke: nil, fill: .green))
        }
        var framesUntilGreen: Int?
        for count in 1...30 {
            guard let frame = await iterator.next() else { break }
            if Self.isColour(Self.rgb(frame, 0.25, 0.25), (0, 255, 0)) { framesUntilGreen = count; break }
        }
        let seen = try #require(framesUntilGreen, "the change never showed in 30 frames")
        #expect(seen <= 6, "the change showed after \(seen) frames")

        // Burned into photos once added to the photo output; gone from the frames once removed.
        try photo.addOverlay(box)
        let after = try await photo.capturePhoto(with: PhotoSettings(codec: .png, location: directory.path("after.png")))
        let afterPixel = try DecodedImage(try #require(after.location)).rgb(160, 120)
        #expect(Self.isColour(afterPixel, (255, 0, 0)), "\(afterPixel)")
        try marked.removeOverlay(named: "box")
        var cleared = false
        for _ in 1...30 {
            guard let frame = await iterator.next() else { break }
            if Self.isColour(Self.rgb(frame, 0.25, 0.25), (0, 0, 0)) { cleared = true; break }
        }
        #expect(cleared)
        #expect(throws: CaptureError.unknownOverlay(name: "box", output: "marked")) { try marked.removeOverlay(named: "box") }
        #expect(throws: CaptureError.self) { try marked.addOverlay(CaptureOverlay(name: "bad", content: .image(path: directory.path("missing.png")))) }
        #expect(session.isRunning)
        await session.stopRunning()
    }

    @Test func aPreviewOverlayIsInTheViewfinderAndNotInPhotos() async throws {
        let directory = try TemporaryDirectory()
        let (session, _) = try makeSession(preset: .vga640x480, pattern: "black")
        let preview = CaptureVideoPreviewOutput(name: "preview", sink: .none)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(preview)
        try session.addOutput(photo)
        try preview.addOverlay(
            CaptureOverlay(
                name: "button", content: .text("Flash Auto", style: .init(color: .white, background: .red)),
                position: .topLeft))
        // A PNG at half opacity: blue over black composites to half blue.
        let logo = directory.path("half-blue.png")
        #expect(try run(["convert", "-size", "64x64", "xc:rgba(0,0,255,0.5)", "PNG32:" + logo]).status == 0)
        try preview.addOverlay(CaptureOverlay(name: "logo", content: .image(path: logo), position: .point(x: 0.75, y: 0.75)))
        #expect(throws: CaptureError.notRunning(object: preview.description)) { try preview.snapshot() }
        try await session.startRunning()
        #expect(await waitUntil { (try? preview.snapshot()) != nil })  // the viewfinder has shown a frame
        let snapshot = directory.path("viewfinder.png")
        try Data(try preview.snapshot()).write(to: URL(fileURLWithPath: snapshot))
        let viewfinder = try DecodedImage(snapshot)
        #expect(viewfinder.format == "PNG" && viewfinder.width == 640 && viewfinder.height == 480)
        // The box starts 2% of 480 (10 px) from the corner; its first pixels are red.
        #expect(Self.isColour(try viewfinder.rgb(12, 12), (255, 0, 0)))
        #expect(Self.isColour(try viewfinder.rgb(320, 240), (0, 0, 0)))
        let composited = try viewfinder.rgb(480 + 32, 360 + 32)
        #expect(Self.isColour(composited, (0, 0, 128)), "\(composited)")
        let shot = try await photo.capturePhoto(with: PhotoSettings(codec: .png, location: directory.path("shot.png")))
        #expect(Self.isColour(try DecodedImage(try #require(shot.location)).rgb(12, 12), (0, 0, 0)))
        await session.stopRunning()
    }

    @Test func aMovieCarriesItsOverlayAndThePreviewDoesNot() async throws {
        let directory = try TemporaryDirectory()
        let (session, _) = try makeSession(preset: .vga640x480, pattern: "black")
        let movie = CaptureMovieFileOutput(name: "movie")
        let preview = CaptureVideoDataOutput(name: "preview")
        preview.pixelFormat = "RGBx"
        try session.addOutput(movie)
        try session.addOutput(preview)
        try session.addOutput(CaptureVideoPreviewOutput(name: "window", sink: .none))
        try await session.startRunning()
        // Added while running, before the recording starts: the movie's branch already has the element.
        try movie.addOverlay(
            CaptureOverlay(
                name: "corner",
                content: .shapes(
                    [.rectangle(NormalizedRect(x: 0.5, y: 0.5, width: 0.5, height: 0.5))],
                    style: .init(stroke: nil, fill: .blue))))
        let path = directory.path("movie.mp4")
        _ = try await movie.startRecording(to: path)
        #expect(await movie.waitUntilRecorded(.seconds(1)))
        _ = try await movie.stopRecording()
        let frame = try #require(await firstFrame(preview))
        #expect(Self.isColour(Self.rgb(frame, 0.75, 0.75), (0, 0, 0)))
        await session.stopRunning()
        // ffmpeg decodes the first frame; its bottom-right quarter is blue, its top-left black.
        let png = directory.path("frame.png")
        let decoded = try run(["ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", png])
        #expect(decoded.status == 0, "\(decoded.output)")
        let image = try DecodedImage(png)
        #expect(Self.isColour(try image.rgb(480, 360), (0, 0, 255)))
        #expect(Self.isColour(try image.rgb(160, 120), (0, 0, 0)))
    }
}

/// A metadata output outlines the codes it reads on the outputs it highlights on, and clears the
/// outline when they leave.
@Suite(.serialized) struct CodeHighlightTests {
    @Test func theCornersOfACodeInViewAreDrawnOnTheHighlightedOutputOnly() async throws {
        let code = BarcodeCorpus.CodeSpec(type: .qr, serial: 7, modulePixels: 6, center: NormalizedPoint(x: 0.5, y: 0.5))
        let corpus = try await BarcodeFixtures.corpus(
            "highlight",
            [
                // Long enough in view that a loaded machine still checks it while it is there.
                BarcodeCorpus.SceneSpec(name: "qr", codes: [code], frames: 150),
                BarcodeCorpus.SceneSpec(name: "empty", codes: [], frames: 60),
            ])
        let session = CaptureSession(name: "highlight-test")
        try session.addInput(CaptureDeviceInput(deviceID: "file:\(corpus.video)", name: "clip"))
        let codes = CaptureMetadataOutput(name: "codes")
        codes.disappearanceFrames = 2
        let shown = CaptureVideoDataOutput(name: "shown")
        shown.pixelFormat = "RGBx"
        let plain = CaptureVideoDataOutput(name: "plain")
        plain.pixelFormat = "RGBx"
        try session.addOutput(codes)
        try session.addOutput(shown)
        try session.addOutput(plain)
        codes.highlightOutputs = ["shown"]
        let shownFrames = shown.frames(), plainFrames = plain.frames()
        let events = session.events()
        try await session.startRunning()
        // The outline comes with the code (a loaded machine decodes late: wait for it, bounded).
        _ = await waitUntil { shown.overlays.contains { $0.name == "codes-codes" } }
        let seen = shown.overlays.first { $0.name == "codes-codes" }
        let outline = try #require(seen, "no outline within 30 s")
        let detected = await collectEvents(events, until: { $0.name == "code-detected" }, timeout: .seconds(20))
        let event = try #require(detected.last { $0.name == "code-detected" })
        guard case .array(let values)? = event.field("corners") else { Issue.record("no corners in \(event)"); return }
        #expect(values.count == 4)
        guard case .shapes(let shapes, _) = outline.content, case .polygon(let points)? = shapes.first else {
            Issue.record("the outline is \(outline.content)")
            return
        }
        #expect(points.count == 4)
        #expect(plain.overlays.isEmpty)
        // The middle of the outline's top edge is green on the highlighted output, not on the other.
        let edge = NormalizedPoint(x: (points[0].x + points[1].x) / 2, y: (points[0].y + points[1].y) / 2)
        func isGreen(_ frame: VideoFrame) -> Bool {
            let pixel = frame.pixel(x: Int(edge.x * Double(frame.width)), y: Int(edge.y * Double(frame.height)))
            return pixel[1] > 160 && pixel[0] < 110 && pixel[2] < 110
        }
        // The streams may still hold frames from before the code came: look through a bounded number.
        var greenFrames = 0, plainGreen = 0
        var iterator = shownFrames.makeAsyncIterator(), plainIterator = plainFrames.makeAsyncIterator()
        for _ in 0..<90 {
            guard let frame = await iterator.next(), let other = await plainIterator.next() else { break }
            if isGreen(frame) { greenFrames += 1 }
            if isGreen(other) { plainGreen += 1 }
            if greenFrames >= 3 { break }
        }
        #expect(greenFrames >= 3)
        #expect(plainGreen == 0)
        // The code leaves: the outline goes.
        _ = await waitUntil(timeout: .seconds(20)) { !shown.overlays.contains { $0.name == "codes-codes" } }
        #expect(!shown.overlays.contains { $0.name == "codes-codes" })
        await session.stopRunning()
    }
}
