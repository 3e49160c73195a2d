import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// Reads an image with ImageMagick (independent of the project): format, size and pixel colours.
struct DecodedImage {
    let format: String
    let width: Int
    let height: Int
    let path: String

    init(_ path: String) throws {
        let result = try run(["identify", "-format", "%m %w %h", path])
        let parts = result.output.split(separator: " ")
        guard result.status == 0, parts.count == 3, let width = Int(parts[1]), let height = Int(parts[2]) else {
            throw CaptureError.invalidConfiguration(object: path, reason: "identify failed: \(result.output)")
        }
        self.path = path
        format = String(parts[0])
        self.width = width
        self.height = height
    }

    /// The pixel's RGB as 0...255 values.
    func rgb(_ x: Int, _ y: Int) throws -> (Int, Int, Int) {
        let result = try run(["identify", "-format", "%[fx:int(255*p{\(x),\(y)}.r)] %[fx:int(255*p{\(x),\(y)}.g)] %[fx:int(255*p{\(x),\(y)}.b)]", path])
        let values = result.output.split(separator: " ").compactMap { Int($0) }
        guard values.count == 3 else { throw CaptureError.invalidConfiguration(object: path, reason: result.output) }
        return (values[0], values[1], values[2])
    }
}

/// SMPTE bars (videotestsrc's default pattern): seven bars across the top two thirds.
func smpteBar(_ rgb: (Int, Int, Int)) -> String {
    func high(_ v: Int) -> Bool { v > 150 }
    func low(_ v: Int) -> Bool { v < 60 }
    switch (rgb.0, rgb.1, rgb.2) {
    case let (r, g, b) where high(r) && high(g) && high(b): return "white"
    case let (r, g, b) where high(r) && high(g) && low(b): return "yellow"
    case let (r, g, b) where low(r) && high(g) && high(b): return "cyan"
    case let (r, g, b) where low(r) && high(g) && low(b): return "green"
    case let (r, g, b) where high(r) && low(g) && high(b): return "magenta"
    case let (r, g, b) where high(r) && low(g) && low(b): return "red"
    case let (r, g, b) where low(r) && low(g) && high(b): return "blue"
    default: return "other \(rgb)"
    }
}

final class OrderRecorder: CapturePhotoCaptureDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String] = []
    var recorded: [String] { lock.withLock { calls } }
    private func add(_ name: String) { lock.withLock { calls.append(name) } }
    func photoOutput(_ output: CapturePhotoOutput, willBeginCaptureFor settings: ResolvedPhotoSettings) { add("will-begin") }
    func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings) { add("will-capture") }
    func photoOutput(_ output: CapturePhotoOutput, didCapturePhotoFor settings: ResolvedPhotoSettings) { add("did-capture") }
    func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>) {
        add((try? result.get()) != nil ? "did-finish-processing" : "did-finish-processing-error")
    }
    func photoOutput(_ output: CapturePhotoOutput, didFinishCaptureFor settings: ResolvedPhotoSettings, error: CaptureError?) { add("did-finish-capture") }
}

func photoSession(preset: SessionPreset = .vga640x480, zeroShutterLag: Bool = false) async throws -> (CaptureSession, CapturePhotoOutput) {
    let (session, _) = try makeSession(preset: preset)
    let photo = CapturePhotoOutput(name: "photo")
    photo.defaults.zeroShutterLag = zeroShutterLag
    try session.addOutput(photo)
    try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
    try await session.startRunning()
    return (session, photo)
}

@Suite(.serialized) struct PhotoTests {
    @Test func jpegHasTheStreamsPixelsAndSize() async throws {
        let directory = try TemporaryDirectory()
        let (session, photo) = try await photoSession()
        let recorder = OrderRecorder()
        let shot = try await photo.capturePhoto(with: PhotoSettings(location: directory.path("IMG_%04d.jpg")), delegate: recorder)
        await session.stopRunning()
        #expect(shot.location == directory.path("IMG_0001.jpg"))
        let image = try DecodedImage(try #require(shot.location))
        #expect(image.format == "JPEG" && image.width == 640 && image.height == 480)
        #expect(shot.width == 640 && shot.height == 480)
        // Bars are 640/7 ≈ 91 px wide: the middle of bar 0 is white, of bar 5 red, of bar 6 blue.
        #expect(smpteBar(try image.rgb(45, 100)) == "white")
        #expect(smpteBar(try image.rgb(91 * 5 + 45, 100)) == "red")
        #expect(smpteBar(try image.rgb(91 * 6 + 45, 100)) == "blue")
        // The delegate hears on its own queue, behind the capture's answer.
        #expect(await waitUntil { recorder.recorded.count >= 5 })
        #expect(recorder.recorded == ["will-begin", "will-capture", "did-capture", "did-finish-processing", "did-finish-capture"])
    }

    @Test func pngCropReallyCrops() async throws {
        let directory = try TemporaryDirectory()
        let (session, photo) = try await photoSession()
        // The right half of the frame: bars 3.5 ... 7 (green, magenta, red, blue).
        let shot = try await photo.capturePhoto(
            with: PhotoSettings(
                codec: .png, crop: NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1),
                location: directory.path("crop.png")))
        await session.stopRunning()
        let image = try DecodedImage(try #require(shot.location))
        #expect(image.format == "PNG" && image.width == 320 && image.height == 480)
        #expect(smpteBar(try image.rgb(5, 100)) == "green")
        #expect(smpteBar(try image.rgb(315, 100)) == "blue")
    }

    /// A shot of a photo output turned 90 degrees (with `overlay`) and one of a mirrored output, at 640x480.
    static func turnedShots(into directory: TemporaryDirectory, rotatesPixels: Bool, overlay: CaptureOverlay? = nil) async throws -> (Photo, Photo) {
        let (session, _) = try makeSession(preset: .vga640x480)
        let photo = CapturePhotoOutput(name: "photo")
        photo.connection = ConnectionSettings(rotation: 90, rotatesPixels: rotatesPixels)
        if let overlay { try photo.addOverlay(overlay) }
        let mirrored = CapturePhotoOutput(name: "mirrored")
        mirrored.connection = ConnectionSettings(isMirrored: true, rotatesPixels: rotatesPixels)
        try session.addOutput(photo)
        try session.addOutput(mirrored)
        try await session.startRunning()
        let rotated = try await photo.capturePhoto(with: PhotoSettings(location: directory.path("rotated.jpg")))
        let flipped = try await mirrored.capturePhoto(with: PhotoSettings(location: directory.path("mirrored.jpg")))
        await session.stopRunning()
        return (rotated, flipped)
    }

    /// With `rotatesPixels` the photo's pixels are turned and its EXIF orientation stays "normal".
    @Test func rotationAndMirroringAreAppliedToThePixelsOnRequest() async throws {
        let directory = try TemporaryDirectory()
        let (rotated, flipped) = try await Self.turnedShots(into: directory, rotatesPixels: true)
        let image = try DecodedImage(try #require(rotated.location))
        #expect(image.width == 480 && image.height == 640 && rotated.width == 480)
        // Rotated clockwise, the white left bar of the pattern is now along the top, blue along the bottom.
        #expect(smpteBar(try image.rgb(380, 45)) == "white")
        #expect(smpteBar(try image.rgb(380, 600)) == "blue")
        let mirror = try DecodedImage(try #require(flipped.location))
        #expect(smpteBar(try mirror.rgb(45, 100)) == "blue")
        #expect(smpteBar(try mirror.rgb(600, 100)) == "white")
        #expect(try run(["exiftool", "-s", "-Orientation", "-n", image.path]).output.contains(": 1"))
    }

    /// Issue 29: by default, as iOS stores photos, the pixels stay as the camera gives them and the EXIF
    /// Orientation says how to show them (exiftool reads 6, "Rotate 90 CW", and 2, "Mirror
    /// horizontal"); ImageMagick's -auto-orient shows them turned. The overlay is drawn upright as
    /// shown: its text reads at the top left of the turned picture.
    @Test func rotationAndMirroringAreTagsByDefault() async throws {
        let directory = try TemporaryDirectory()
        let mark = CaptureOverlay.Shape.rectangle(NormalizedRect(x: 0, y: 0, width: 0.25, height: 0.1))
        let overlay = CaptureOverlay(name: "mark", content: .shapes([mark], style: .init(stroke: nil, fill: .red)))
        let (rotated, flipped) = try await Self.turnedShots(into: directory, rotatesPixels: false, overlay: overlay)
        let image = try DecodedImage(try #require(rotated.location))
        #expect(image.width == 640 && image.height == 480 && rotated.width == 640 && rotated.metadata["Orientation"] == "6")
        #expect(try run(["exiftool", "-s3", "-Orientation", "-n", image.path]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "6")
        #expect(smpteBar(try image.rgb(45, 300)) == "white")  // the camera's pixels: white bar on the left
        let shown = directory.path("shown.png")
        #expect(try run(["convert", image.path, "-auto-orient", shown]).status == 0)
        let upright = try DecodedImage(shown)
        #expect(upright.width == 480 && upright.height == 640)
        #expect(smpteBar(try upright.rgb(380, 45)) == "white")
        #expect(smpteBar(try upright.rgb(380, 600)) == "blue")
        // The overlay's rectangle (top left, a quarter of the width, a tenth of the height) as shown.
        let red = try upright.rgb(60, 30)
        #expect(red.0 > 200 && red.1 < 80 && red.2 < 80, "\(red)")
        #expect(smpteBar(try upright.rgb(200, 30)) == "white")
        let mirror = try DecodedImage(try #require(flipped.location))
        #expect(try run(["exiftool", "-s3", "-Orientation", "-n", mirror.path]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        #expect(smpteBar(try mirror.rgb(45, 100)) == "white")
    }

    @Test func sizeChangesBetweenShots() async throws {
        let directory = try TemporaryDirectory()
        let (session, photo) = try await photoSession(preset: .hd1280x720)
        var sizes: [Size] = []
        for size in [Size(width: 320, height: 240), Size(width: 1280, height: 720), Size(width: 640, height: 360)] {
            let shot = try await photo.capturePhoto(with: PhotoSettings(size: size, location: directory.path("s_%d.jpg")))
            let image = try DecodedImage(try #require(shot.location))
            sizes.append(Size(width: image.width, height: image.height))
        }
        await session.stopRunning()
        #expect(sizes == [Size(width: 320, height: 240), Size(width: 1280, height: 720), Size(width: 640, height: 360)])
    }

    @Test func exactlyOneFramePerCaptureReachesTheEncoder() async throws {
        let (session, photo) = try await photoSession()
        // Frames flow through the session (a branch of its own counts them) while the encoder waits.
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        #expect(await frames.waitForFrames(10))
        #expect(photo.encoderFrameCount == 0, "the encoder is idle between captures")
        for _ in 0..<3 { _ = try await photo.capturePhoto() }
        #expect(await frames.waitForFrames(10))
        await session.stopRunning()
        #expect(photo.encoderFrameCount == 3)
    }

    @Test func rapidFireEachToItsOwnLocation() async throws {
        let directory = try TemporaryDirectory()
        let (session, photo) = try await photoSession()
        let names = (0..<5).map { directory.path("rapid-\($0).jpg") }
        let results = await photo.capturePhotos(names.map { PhotoSettings(location: $0) })
        await session.stopRunning()
        let locations = results.compactMap { try? $0.get().location }
        #expect(locations == names)
        for name in names { #expect(try DecodedImage(name).width == 640) }
        // Each request got its own frame.
        let times = Set(results.compactMap { try? $0.get().timestamp })
        #expect(times.count == 5)
    }

    @Test func tagsAreReadableByExiftool() async throws {
        let directory = try TemporaryDirectory()
        let (session, photo) = try await photoSession()
        let tags = PhotoTags(latitude: 48.137, longitude: 11.575, altitude: 519, comment: "hello comment", description: "a test shot")
        let jpeg = try await photo.capturePhoto(with: PhotoSettings(location: directory.path("tags.jpg"), tags: tags))
        let png = try await photo.capturePhoto(with: PhotoSettings(codec: .png, location: directory.path("tags.png"), tags: tags))
        await session.stopRunning()
        let jpegTags = try run([
            "exiftool", "-s", "-Make", "-Model", "-Software", "-DateTimeOriginal", "-Orientation", "-GPSLatitude",
            "-GPSLongitude", "-ImageDescription", "-Comment", "-n", try #require(jpeg.location),
        ]).output
        #expect(jpegTags.contains("Make") && jpegTags.contains("capture"))
        #expect(jpegTags.contains("Model") && jpegTags.contains("Test Pattern"))
        #expect(jpegTags.contains("Software") && jpegTags.contains("capture 0.1.0"))
        #expect(jpegTags.contains("DateTimeOriginal"))
        #expect(jpegTags.contains("Orientation") && jpegTags.contains(": 1"))
        #expect(jpegTags.contains("GPSLatitude") && jpegTags.contains("48.13"))
        #expect(jpegTags.contains("GPSLongitude") && jpegTags.contains("11.57"))
        #expect(jpegTags.contains("a test shot"))
        #expect(jpegTags.contains("hello comment"))
        let pngTags = try run(["exiftool", "-s", try #require(png.location)]).output
        #expect(pngTags.contains("Software") && pngTags.contains("capture 0.1.0"))
        #expect(pngTags.contains("a test shot") && pngTags.contains("48.137"))
        #expect(try DecodedImage(try #require(png.location)).format == "PNG")
    }

    @Test func savingNeverOverwrites() async throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path("photo.jpg")
        try Data("existing".utf8).write(to: URL(fileURLWithPath: plain))
        let (session, photo) = try await photoSession()
        let first = try await photo.capturePhoto(with: PhotoSettings(location: plain))
        let second = try await photo.capturePhoto(with: PhotoSettings(location: plain))
        await session.stopRunning()
        #expect(first.location == directory.path("photo-1.jpg"))
        #expect(second.location == directory.path("photo-2.jpg"))
        #expect(try String(contentsOfFile: plain, encoding: .utf8) == "existing")
        // No temporary file is left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    @Test func zeroShutterLagTakesTheFrameNearestTheRequest() async throws {
        let (session, photo) = try await photoSession(zeroShutterLag: true)
        // The ring fills with frames before the first request; requests come a frame or two apart.
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        #expect(await frames.waitForFrames(10))
        var lags: [Double] = []
        for index in 0..<5 {
            lags.append(try await photo.capturePhoto().shutterLag)
            #expect(await frames.waitForFrames(1 + index % 2))
        }
        await session.stopRunning()
        // At 30 fps the nearest frame is at most half a frame interval away (one interval with jitter).
        #expect(lags.allSatisfy { abs($0) <= 1.0 / 30.0 + 0.005 }, "\(lags)")
    }

    @Test func badRequestsFailAndTheSessionKeepsRunning() async throws {
        let (session, photo) = try await photoSession()
        let events = session.events()
        await #expect(throws: CaptureError.self) { try await photo.capturePhoto(with: PhotoSettings(size: Size(width: 4000, height: 3000))) }
        await #expect(throws: CaptureError.self) {
            try await photo.capturePhoto(with: PhotoSettings(crop: NormalizedRect(x: 0.8, y: 0, width: 0.5, height: 1)))
        }
        await #expect(throws: CaptureError.self) { try await photo.capturePhoto(with: PhotoSettings(quality: 0)) }
        do {
            _ = try await photo.capturePhoto(with: PhotoSettings(location: "/proc/no-such-dir/x.jpg"))
            Issue.record("an unwritable location must fail")
        } catch {
            #expect(error.name == "location-not-writable")
        }
        await #expect(throws: CaptureError.flashNotSupported(device: "test-pattern")) {
            try await photo.capturePhoto(with: PhotoSettings(flashMode: .on))
        }
        let recorder = OrderRecorder()
        _ = try? await photo.capturePhoto(with: PhotoSettings(quality: 500), delegate: recorder)
        #expect(session.isRunning)
        let good = try await photo.capturePhoto()
        #expect(good.width == 640)
        await session.stopRunning()
        await #expect(throws: CaptureError.notRunning(object: "photo output 'photo'")) { try await photo.capturePhoto() }
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
        #expect(!seen.contains { $0.name == "runtime-error" })
        #expect(seen.filter { $0.name == "photo-captured" }.count == 1)
        #expect(await waitUntil { !recorder.recorded.isEmpty })  // on the delegate's queue, behind the error
        #expect(recorder.recorded == ["did-finish-processing-error"])
    }

    /// Needs root to mount a 64 KiB tmpfs, the only way to get a real ENOSPC here.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root")) func fullDiskIsATypedError() async throws {
        let directory = try TemporaryDirectory()
        let mountPoint = directory.path("full")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.output)")
        defer { _ = try? run(["umount", mountPoint]) }
        let (session, photo) = try await photoSession(preset: .hd1280x720)
        do {
            _ = try await photo.capturePhoto(with: PhotoSettings(codec: .png, location: mountPoint + "/big.png"))
            Issue.record("a 1280x720 PNG cannot fit in 64 KiB")
        } catch {
            #expect(error.name == "disk-full")
        }
        #expect(session.isRunning)
        _ = try await photo.capturePhoto()
        await session.stopRunning()
        let left = try FileManager.default.contentsOfDirectory(atPath: mountPoint)
        #expect(left.isEmpty, "nothing half-written is left: \(left)")
    }
}
