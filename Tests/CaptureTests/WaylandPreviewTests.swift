import Foundation
import Testing

@testable import Capture

/// A preview in an application's Wayland surface, without a compositor: the rectangle arithmetic, the
/// settings' rules and the branch the compiler makes. The pixels are checked under a real compositor by
/// scripts/test-wayland-preview.py.
@Suite struct WaylandPreviewTests {
    /// Two addresses that stand for the application's objects; nothing here dereferences them.
    static let surface = WaylandSurface(display: UnsafeMutableRawPointer(bitPattern: 0x1000)!, surface: UnsafeMutableRawPointer(bitPattern: 0x2000)!)

    @Test(arguments: [
        // A GTK 4 window with client-side decorations: the shadow's margins (14) put the window's
        // origin inside its surface, and the content sits under the header bar (35).
        (ViewPoint(x: 0, y: 35), ViewPoint(x: 14, y: 14), SurfaceRect(x: 14, y: 49, width: 640, height: 443)),
        // Maximized or server-side decorated: no margins.
        (ViewPoint(x: 0, y: 35), ViewPoint(x: 0, y: 0), SurfaceRect(x: 0, y: 35, width: 640, height: 443)),
        // A widget at half a pixel rounds to the nearest whole pixel (ties away from zero).
        (ViewPoint(x: 10.5, y: 20.4), ViewPoint(x: 14, y: 14), SurfaceRect(x: 25, y: 34, width: 640, height: 443)),
    ])
    func aWidgetsRectangleIsInTheSurfacesCoordinates(origin: ViewPoint, offset: ViewPoint, expected: SurfaceRect) {
        #expect(SurfaceRect(origin: origin, surfaceOffset: offset, size: Size(width: 640, height: 443)) == expected)
    }

    @Test func aRectangleDescribesItselfAsAGeometry() {
        #expect(SurfaceRect(x: 14, y: 49, width: 640, height: 443).description == "640x443+14+49")
        #expect(SurfaceRect(x: -3, y: 0, width: 2, height: 2).description == "2x2-3+0")
        #expect(SurfaceRect(x: 1, y: 1, width: 0, height: 5).isEmpty)
        #expect(SurfaceRect(x: 1, y: 2, width: 3, height: 4).resized(to: Size(width: 7, height: 8)) == SurfaceRect(x: 1, y: 2, width: 7, height: 8))
    }

    @Test func theAreaIsTheViewAndKeepsItsCornerWhenTheViewIsResized() throws {
        let preview = CaptureVideoPreviewOutput(name: "surface")
        #expect(preview.surfaceArea == nil)
        try preview.setWaylandSurface(Self.surface, area: SurfaceRect(x: 14, y: 49, width: 640, height: 443))
        #expect(preview.waylandSurface == Self.surface)
        #expect(preview.viewSize == Size(width: 640, height: 443))
        #expect(preview.showsWindow)
        // The toolkit's size alone (viewSize) keeps the corner; nil leaves the area as it is.
        preview.viewSize = Size(width: 500, height: 363)
        #expect(preview.surfaceArea == SurfaceRect(x: 14, y: 49, width: 500, height: 363))
        preview.viewSize = nil
        #expect(preview.surfaceArea == SurfaceRect(x: 14, y: 49, width: 500, height: 363))
        try preview.setSurfaceArea(SurfaceRect(x: 0, y: 35, width: 800, height: 565))
        #expect(preview.surfaceArea == SurfaceRect(x: 0, y: 35, width: 800, height: 565))
        #expect(preview.viewSize == Size(width: 800, height: 565))
        // nil goes back to the sink.
        try preview.setWaylandSurface(nil, area: SurfaceRect(x: 0, y: 0, width: 1, height: 1))
        #expect(preview.waylandSurface == nil && preview.surfaceArea == nil)
    }

    @Test func emptyAreasAndAreasWithoutASurfaceAreRefusedNamingThePreview() throws {
        let preview = CaptureVideoPreviewOutput(name: "surface")
        let withoutSurface = try #require(throws: CaptureError.self) { try preview.setSurfaceArea(SurfaceRect(x: 0, y: 0, width: 10, height: 10)) }
        #expect(withoutSurface.description.contains("surface") && withoutSurface.description.contains("setWaylandSurface"), "\(withoutSurface)")
        let empty = try #require(throws: CaptureError.self) { try preview.setWaylandSurface(Self.surface, area: SurfaceRect(x: 0, y: 0, width: 0, height: 10)) }
        #expect(empty.description.contains("wl_surface@0x0000000000002000") && empty.description.contains("0x10+0+0"), "\(empty)")
        #expect(preview.waylandSurface == nil)
        try preview.setWaylandSurface(Self.surface, area: SurfaceRect(x: 0, y: 0, width: 10, height: 10))
        let emptyArea = try #require(throws: CaptureError.self) { try preview.setSurfaceArea(SurfaceRect(x: 0, y: 0, width: 10, height: -1)) }
        #expect(emptyArea.description.contains("10x-1"), "\(emptyArea)")
        #expect(preview.surfaceArea == SurfaceRect(x: 0, y: 0, width: 10, height: 10))
    }

    @Test func aSurfaceAndARendererAreNotBoth() throws {
        let preview = CaptureVideoPreviewOutput(name: "surface")
        try preview.setWaylandSurface(Self.surface, area: SurfaceRect(x: 0, y: 0, width: 320, height: 240))
        let renderer = NothingRenderer()
        preview.renderer = renderer
        #expect(throws: CaptureError.self) { try GraphCompiler.compile(try Self.configuration([preview]), environment: Self.environment) }
    }

    /// The branch scales and boxes to the area's size as for an X11 window (the gravity's bars are the
    /// box's, black), converts after the box, and ends in waylandsink.
    @Test(arguments: [
        (VideoGravity.resizeAspect, Size(width: 640, height: 360), ["0", "0", "-41", "-42"]),
        (VideoGravity.resizeAspectFill, Size(width: 788, height: 443), ["74", "74", "0", "0"]),
    ])
    func theBranchFitsTheAreaAndEndsInWaylandsink(gravity: VideoGravity, scaled: Size, box: [String]) throws {
        let preview = CaptureVideoPreviewOutput(name: "surface")
        preview.videoGravity = gravity
        try preview.setWaylandSurface(Self.surface, area: SurfaceRect(x: 14, y: 49, width: 640, height: 443))
        let graph = try GraphCompiler.compile(try Self.configuration([preview]), environment: Self.environment).graph
        let elements = try #require(graph.branches.first { $0.output == "surface" }).chains.flatMap(\.elements)
        #expect(elements.suffix(3).map(\.factory) == ["videobox", "videoconvert", "waylandsink"])
        let videobox = try #require(elements.first { $0.factory == "videobox" })
        #expect(videobox.liveProperties.map(\.value) == box, "\(videobox.liveProperties)")
        let size = try #require(elements.first { $0.name == "surface_size" })
        #expect(size.liveProperties.contains { $0.value.contains("width=\(scaled.width)") && $0.value.contains("height=\(scaled.height)") }, "\(size)")
    }

    static let environment = CompileEnvironment(encoders: H264EncoderSelection(encoder: nil, installed: []), isControllable: { _ in false })

    static func configuration(_ outputs: [CaptureOutput]) throws -> SessionConfiguration {
        SessionConfiguration(preset: .hd1280x720, inputs: [try CaptureDeviceInput(deviceID: "test-pattern", name: "camera")], outputs: outputs)
    }
}

/// A renderer that shows nothing.
private final class NothingRenderer: CapturePreviewRenderer {
    func previewOutput(_ output: CaptureVideoPreviewOutput, render frame: VideoFrame) {}
}
