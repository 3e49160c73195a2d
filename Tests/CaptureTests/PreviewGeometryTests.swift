import CaptureTestSupport
import Foundation
import Synchronization
import Testing

@testable import Capture

/// Where a preview's video lies in its view and how points convert: arithmetic alone, as tables.
@Suite struct PreviewGeometryTests {
    let hd = Size(width: 1280, height: 720)

    @Test(arguments: [
        // gravity, view, scaled size, video rect (x, y, w, h), box (left, right, top, bottom)
        (VideoGravity.resizeAspect, Size(width: 640, height: 480), Size(width: 640, height: 360), [0, 60, 640, 360], [0, 0, -60, -60]),
        (.resizeAspect, Size(width: 480, height: 480), Size(width: 480, height: 270), [0, 105, 480, 270], [0, 0, -105, -105]),
        (.resizeAspect, Size(width: 1000, height: 400), Size(width: 712, height: 400), [144, 0, 712, 400], [-144, -144, 0, 0]),
        (.resizeAspectFill, Size(width: 640, height: 480), Size(width: 854, height: 480), [-107, 0, 854, 480], [107, 107, 0, 0]),
        (.resizeAspectFill, Size(width: 1000, height: 400), Size(width: 1000, height: 562), [0, -81, 1000, 562], [0, 0, 81, 81]),
        (.resize, Size(width: 640, height: 480), Size(width: 640, height: 480), [0, 0, 640, 480], [0, 0, 0, 0]),
        (.resizeAspect, Size(width: 1280, height: 720), Size(width: 1280, height: 720), [0, 0, 1280, 720], [0, 0, 0, 0]),
    ])
    func theVideoFillsTheViewAsTheGravitySays(gravity: VideoGravity, view: Size, scaled: Size, rect: [Int], box: [Int]) {
        let geometry = PreviewGeometry(frameSize: hd, viewSize: view, gravity: gravity)
        #expect(geometry.scaledSize == scaled)
        let video = geometry.videoRect
        #expect([Int(video.x), Int(video.y), Int(video.width), Int(video.height)] == rect)
        let edges = geometry.box
        #expect([edges.left, edges.right, edges.top, edges.bottom] == box)
        // What the box leaves is exactly the view.
        #expect(scaled.width - edges.left - edges.right == view.width)
        #expect(scaled.height - edges.top - edges.bottom == view.height)
    }

    @Test func anOddDifferenceSplitsItsBarsOneApart() {
        let geometry = PreviewGeometry(frameSize: hd, viewSize: Size(width: 640, height: 481), gravity: .resizeAspect)
        let edges = geometry.box
        #expect(edges.top + edges.bottom == -121)
        #expect(abs(edges.top - edges.bottom) == 1)
        #expect(Int(geometry.videoRect.y) == -edges.top)
    }

    @Test func aTurnedFrameIsFittedAsItIsShown() {
        // 1280x720 turned 90 degrees is 720x1280: in 640x480 it is 270x480, pillarboxed.
        let geometry = PreviewGeometry(frameSize: hd, viewSize: Size(width: 640, height: 480), gravity: .resizeAspect, rotation: 90)
        #expect(geometry.shownFrameSize == Size(width: 720, height: 1280))
        #expect(geometry.scaledSize == Size(width: 270, height: 480))
        #expect(Int(geometry.videoRect.x) == 185)
    }

    @Test(arguments: [
        // gravity, rotation, mirrored, view point, device point
        (VideoGravity.resizeAspect, 0, false, ViewPoint(x: 320, y: 60), NormalizedPoint(x: 0.5, y: 0)),
        (.resizeAspect, 0, false, ViewPoint(x: 0, y: 420), NormalizedPoint(x: 0, y: 1)),
        (.resizeAspect, 0, false, ViewPoint(x: 320, y: 0), NormalizedPoint(x: 0.5, y: -60.0 / 360)),
        (.resizeAspect, 0, true, ViewPoint(x: 0, y: 60), NormalizedPoint(x: 1, y: 0)),
        (.resizeAspectFill, 0, false, ViewPoint(x: 0, y: 0), NormalizedPoint(x: 107.0 / 854, y: 0)),
        (.resize, 0, false, ViewPoint(x: 640, y: 480), NormalizedPoint(x: 1, y: 1)),
        // Turned 90 degrees clockwise: the camera's top-left corner is shown at the view's top-right.
        (.resize, 90, false, ViewPoint(x: 640, y: 0), NormalizedPoint(x: 0, y: 0)),
        (.resize, 90, false, ViewPoint(x: 640, y: 480), NormalizedPoint(x: 1, y: 0)),
        (.resize, 180, false, ViewPoint(x: 0, y: 0), NormalizedPoint(x: 1, y: 1)),
        (.resize, 270, false, ViewPoint(x: 0, y: 480), NormalizedPoint(x: 0, y: 0)),
        (.resize, 270, true, ViewPoint(x: 640, y: 480), NormalizedPoint(x: 0, y: 0)),
    ])
    func aViewPointIsTheCamerasPointShownThere(gravity: VideoGravity, rotation: Int, mirrored: Bool, view: ViewPoint, device: NormalizedPoint) {
        let geometry = PreviewGeometry(frameSize: hd, viewSize: Size(width: 640, height: 480), gravity: gravity, rotation: rotation, isMirrored: mirrored)
        let converted = geometry.devicePoint(fromViewPoint: view)
        #expect(abs(converted.x - device.x) < 1e-9 && abs(converted.y - device.y) < 1e-9, "\(converted) != \(device)")
        // And back.
        let back = geometry.viewPoint(fromDevicePoint: converted)
        #expect(abs(back.x - view.x) < 1e-9 && abs(back.y - view.y) < 1e-9, "\(back) != \(view)")
    }

    @Test func rectanglesConvertBothWays() {
        let geometry = PreviewGeometry(frameSize: hd, viewSize: Size(width: 640, height: 480), gravity: .resizeAspect, isMirrored: true)
        // The right half of the mirrored picture is the left half of the camera's frame.
        let rect = geometry.deviceRect(fromViewRect: ViewRect(x: 320, y: 60, width: 320, height: 360))
        #expect(abs(rect.x) < 1e-9 && abs(rect.y) < 1e-9 && abs(rect.width - 0.5) < 1e-9 && abs(rect.height - 1) < 1e-9)
        let back = geometry.viewRect(fromDeviceRect: rect)
        #expect(abs(back.x - 320) < 1e-9 && abs(back.y - 60) < 1e-9 && abs(back.width - 320) < 1e-9 && abs(back.height - 360) < 1e-9)
    }
}

/// A renderer that keeps the size and a few pixels of each frame it is given.
private final class RecordingRenderer: CapturePreviewRenderer {
    struct Seen: Sendable {
        var size: Size
        var format: String
        /// BGRA of the top-left pixel, the pixel 5 rows into the middle column, and the centre.
        var corner: [UInt8], top: [UInt8], centre: [UInt8]
    }
    let frames = Locked<[Seen]>([])

    func previewOutput(_ output: CaptureVideoPreviewOutput, render frame: VideoFrame) {
        let seen = Seen(
            size: Size(width: frame.width, height: frame.height), format: frame.pixelFormat, corner: frame.pixel(x: 0, y: 0),
            top: frame.pixel(x: frame.width / 2, y: 5), centre: frame.pixel(x: frame.width / 2, y: frame.height / 2))
        frames.withLock { $0.append(seen) }
    }

    var last: Seen? { frames.withLock { $0.last } }
}

/// A preview drawn by a renderer (a toolkit's view): frames at the view's size, gravity and resizes
/// applied on the running session.
@Suite struct PreviewRendererTests {
    @Test func aRendererGetsFramesAtTheViewsSizeAndFollowsItsChanges() async throws {
        let (session, _) = try makeSession(preset: .high)
        let preview = CaptureVideoPreviewOutput(name: "view")
        let renderer = RecordingRenderer()
        preview.renderer = renderer
        try session.addOutput(preview)
        try await session.startRunning()
        defer { Task { await session.stopRunning() } }
        // Without a view size, frames come at the session's size; the view's size is then applied to
        // the running branch, as a toolkit's view does once it is laid out.
        #expect(await waitUntil(timeout: .seconds(20)) { renderer.last?.size == Size(width: 1920, height: 1080) })
        preview.viewSize = Size(width: 320, height: 320)

        #expect(await waitUntil(timeout: .seconds(20)) { renderer.last?.size == Size(width: 320, height: 320) })
        let first = try #require(renderer.last)
        #expect(first.format == "BGRA")
        // resize-aspect: 320x180 in the middle, 70-pixel black bars above and below.
        #expect(first.top.prefix(3).allSatisfy { $0 < 16 }, "the bar above the picture is black: \(first.top)")
        #expect(!first.centre.prefix(3).allSatisfy { $0 < 16 }, "the picture is in the middle: \(first.centre)")
        #expect(preview.geometry?.videoRect == ViewRect(x: 0, y: 70, width: 320, height: 180))

        // Fill: no bar; then a resize, both on the running session.
        preview.videoGravity = .resizeAspectFill
        #expect(await waitUntil(timeout: .seconds(20)) { renderer.last.map { !$0.top.prefix(3).allSatisfy { $0 < 16 } } ?? false })
        preview.viewSize = Size(width: 200, height: 100)
        #expect(await waitUntil(timeout: .seconds(20)) { renderer.last?.size == Size(width: 200, height: 100) })
        #expect(preview.renderedFrameCount > 2)
        // Overlays are drawn in the view's frames (on the picture, before the bars or the crop).
        try preview.addOverlay(
            CaptureOverlay(
                name: "mark",
                content: .shapes(
                    [.rectangle(NormalizedRect(x: 0.4, y: 0.4, width: 0.2, height: 0.2))],
                    style: .init(stroke: nil, fill: OverlayColor(red: 1, green: 0.5, blue: 0)))))
        let orange = { (pixel: [UInt8]) in pixel[0] < 60 && (90...170).contains(pixel[1]) && pixel[2] > 200 }
        #expect(await waitUntil(timeout: .seconds(20)) { renderer.last.map { orange($0.centre) } ?? false }, "\(String(describing: renderer.last?.centre))")
        // And the snapshot is what the view shows: the view's size.
        let snapshot = try preview.snapshot()
        let be32 = { (at: Int) in snapshot[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        #expect(snapshot.count > 24 && be32(16) == 200 && be32(20) == 100, "a PNG of the view's size (IHDR width, height)")
        // The point at the view's centre is the camera's centre, whatever the gravity.
        let centre = preview.captureDevicePointConverted(fromLayerPoint: ViewPoint(x: 100, y: 50))
        #expect(abs(centre.x - 0.5) < 1e-9 && abs(centre.y - 0.5) < 1e-9)
        await session.stopRunning()
    }

    /// A toolkit's view gets its size whenever its toolkit lays it out, also while the session starts:
    /// sizes given during the start never stop the session (caps changed while the pipeline first
    /// negotiated left the source with nothing to agree on: not-negotiated, the session stopped).
    @Test func viewSizesGivenWhileTheSessionStartsNeverStopIt() async throws {
        for _ in 0..<10 {
            let (session, _) = try makeSession(preset: .high)
            let preview = CaptureVideoPreviewOutput(name: "view")
            let renderer = RecordingRenderer()
            preview.renderer = renderer
            try session.addOutput(preview)
            let events = session.events()
            let starting = Locked(true)
            let (layoutEnded, ended) = AsyncStream<Void>.makeStream()
            // Another thread lays the view out again and again until the start returned.
            let layout = Thread {
                var wide = false
                while starting.value {
                    preview.viewSize = Size(width: wide ? 322 : 320, height: 240)
                    wide.toggle()
                }
                ended.finish()
            }
            layout.start()
            try await session.startRunning()
            starting.value = false
            for await _ in layoutEnded {}  // the layout thread's last size is in
            preview.viewSize = Size(width: 320, height: 240)
            #expect(
                await waitUntil(timeout: .seconds(20)) { renderer.last?.size == Size(width: 320, height: 240) },
                "frames: \(renderer.frames.withLock { $0.count }), the last at \(renderer.last.map { "\($0.size)" } ?? "none"), running \(session.isRunning)")
            await session.stopRunning()
            let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
            #expect(!seen.contains { $0.name == "runtime-error" || $0.name == "interrupted" }, "\(seen.map(\.name))")
        }
    }

    @Test func aWindowHandleIsCheckedWhenItIsGiven() throws {
        // No display here (the suites run headless), or no such window on it: refused at once, naming
        // the window, and the preview keeps no handle.
        let preview = CaptureVideoPreviewOutput(name: "window")
        let error = try #require(throws: CaptureError.self) { try preview.setWindowHandle(0x7fff_fff1) }
        #expect(error.description.contains("0x7ffffff1"), "\(error)")
        #expect(preview.windowHandle == nil)
    }
}
