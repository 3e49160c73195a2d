import Foundation
import GStreamer
import Testing

@testable import Capture

/// Cameras through PipeWire: what GStreamer's pipewire device provider reports of a node becomes a
/// device with a stable id, a source that selects the node by name, and only the formats pipewiresrc can
/// be opened with. No PipeWire daemon is needed: the reports are built by hand, with the properties
/// the provider gave for vivid in the hardware tier's VM.
@Suite struct PipeWireDeviceTests {
    static let nodeProperties: [String: String] = [
        "api.v4l2.path": "/dev/video0",
        "api.v4l2.cap.bus_info": "platform:vivid-000",
        "api.v4l2.cap.card": "vivid",
        "api.v4l2.cap.driver": "vivid",
        "media.class": "Video/Source",
        "node.name": "v4l2_input.platform-vivid.0",
        "node.nick": "vivid",
        "node.description": "vivid (V4L2)",
        "object.path": "v4l2:/dev/video0",
        "object.serial": "38",
    ]

    static func yuy2(_ width: Int, _ height: Int, rates: [FrameRate] = [FrameRate(25)]) -> DeviceFormat {
        DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: width, height: height), frameRates: rates)
    }

    static let formats: [DeviceFormat] = [
        yuy2(1280, 720, rates: [FrameRate(25, 2)]),
        yuy2(640, 480),
        // A raw format GStreamer has no name for: the caps entry has no `format` field.
        DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: nil, size: Size(width: 640, height: 480), frameRates: [FrameRate(25)]),
        // Compressed formats have no pixel format and need none.
        DeviceFormat(mediaSubtype: "image/jpeg", pixelFormat: nil, size: Size(width: 1280, height: 720), frameRates: [FrameRate(30)]),
        // No frame rate, or no size: pipewiresrc cannot be asked for it.
        yuy2(320, 240, rates: []),
        DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "NV12", size: nil, frameRates: [FrameRate(25)]),
    ]

    static func report(
        properties: [String: String] = nodeProperties, factory: String? = "pipewiresrc",
        elementProperties: [String: String] = ["path": "38"], formats: [DeviceFormat] = formats
    ) -> DeviceReport {
        DeviceReport(
            deviceClass: "Video/Source", displayName: "vivid (V4L2)", properties: properties, factory: factory,
            elementProperties: elementProperties, formats: formats)
    }

    static let brightness = DeviceControl(
        id: 0x0098_0900, name: "Brightness", kind: .integer, minimum: 0, maximum: 255, step: 1,
        defaultValue: 128, value: 128, isReadOnly: false, menuItems: [:])

    @Test func aPipeWireCameraIsNamedByItsNodeAndOpensItByName() {
        let device = CaptureDevice(report: Self.report(), controls: { _ in [] })
        #expect(device.uniqueID == "pipewire:v4l2_input.platform-vivid.0")
        #expect(device.localizedName == "vivid (V4L2)")
        #expect(device.mediaType == .video)
        // Only the node's name selects it: not the element's `path` (an object id that changes with
        // every daemon start), not the serial. Frames are copied out of PipeWire's buffers, 4 of them.
        #expect(
            device.kind
                == .system(
                    factory: "pipewiresrc",
                    properties: ["target-object": "v4l2_input.platform-vivid.0", "always-copy": "true", "min-buffers": "4", "max-buffers": "4"]))
        #expect(device.isPipeWire)
        #expect(!device.isVirtual)
        // Opened through the daemon, not through the node: no device path to check or open.
        #expect(device.devicePath == nil)
        #expect(device.v4l2Path == "/dev/video0")
        // The node's name is already what survives a replug.
        #expect(device.stableID == device.uniqueID)
        #expect(device.properties["object.serial"] == "38")
    }

    @Test func formatsWithoutAPixelFormatASizeOrAFrameRateAreLeftOut() {
        let device = CaptureDevice(report: Self.report(), controls: { _ in [] })
        #expect(
            Set(device.formats)
                == Set([
                    Self.yuy2(1280, 720, rates: [FrameRate(25, 2)]),
                    Self.yuy2(640, 480),
                    DeviceFormat(mediaSubtype: "image/jpeg", pixelFormat: nil, size: Size(width: 1280, height: 720), frameRates: [FrameRate(30)]),
                ]))
        // A V4L2 camera keeps every format it reports, as before.
        let v4l2 = CaptureDevice(
            report: Self.report(properties: ["device.path": "/dev/video0"], factory: "v4l2src", elementProperties: [:]),
            controls: { _ in [] })
        #expect(v4l2.formats.count == Self.formats.count)
    }

    @Test func formatsFilteredFromPipeWireCaps() throws {
        // What the provider's caps look like: entries with and without `format`, ranges of rates.
        let caps = try Caps(
            "video/x-raw, format=(string)YUY2, width=(int)640, height=(int)480, framerate=(fraction){ 25/1, 50/1 }; "
                + "video/x-raw, width=(int)640, height=(int)480, framerate=(fraction)25/1; "
                + "video/x-raw, format=(string)NV12, width=(int)1280, height=(int)720, framerate=(fraction)25/2")
        let device = CaptureDevice(report: Self.report(formats: DeviceFormat.formats(from: caps)), controls: { _ in [] })
        #expect(device.formats.allSatisfy { $0.pixelFormat != nil })
        #expect(Set(device.formats.map { "\($0.pixelFormat ?? "-") \($0.size?.description ?? "-")" }) == ["YUY2 640x480", "NV12 1280x720"])
        #expect(device.formats.first { $0.pixelFormat == "YUY2" }?.frameRates.sorted() == [FrameRate(25), FrameRate(50)])
    }

    @Test func controlsAreReadThroughTheV4L2NodeBehindTheCamera() {
        let asked = Locked<[String]>([])
        let device = CaptureDevice(report: Self.report()) { path in
            asked.withLock { $0.append(path) }
            return [Self.brightness]
        }
        #expect(asked.value == ["/dev/video0"])
        #expect(device.controls.map(\.key) == ["brightness"])
        // A node that is not a V4L2 one (libcamera, a screen cast): nothing to read.
        var properties = Self.nodeProperties
        properties["api.v4l2.path"] = nil
        let other = CaptureDevice(report: Self.report(properties: properties)) { path in
            asked.withLock { $0.append(path) }
            return [Self.brightness]
        }
        #expect(other.controls.isEmpty)
        #expect(other.v4l2Path == nil)
        #expect(asked.value == ["/dev/video0"])
    }

    @Test func positionComesFromTheNode() {
        #expect(CaptureDevice(report: Self.report(), controls: { _ in [] }).position == .unspecified)
        var usb = Self.nodeProperties
        usb["api.v4l2.cap.bus_info"] = "usb-0000:00:14.0-1"
        #expect(CaptureDevice(report: Self.report(properties: usb), controls: { _ in [] }).position == .external)
        var front = Self.nodeProperties
        front["api.libcamera.location"] = "front"
        #expect(CaptureDevice(report: Self.report(properties: front), controls: { _ in [] }).position == .front)
        var back = Self.nodeProperties
        back["api.libcamera.location"] = "back"
        #expect(CaptureDevice(report: Self.report(properties: back), controls: { _ in [] }).position == .back)
    }

    @Test func aNodeWithoutANameIsOpenedByItsSerial() {
        var properties = Self.nodeProperties
        properties["node.name"] = nil
        let device = CaptureDevice(report: Self.report(properties: properties), controls: { _ in [] })
        #expect(device.uniqueID == "pipewire:38")
        #expect(
            device.kind == .system(factory: "pipewiresrc", properties: ["target-object": "38", "always-copy": "true", "min-buffers": "4", "max-buffers": "4"]))
    }

    @Test func aV4L2CameraIsMappedAsBefore() {
        let asked = Locked<[String]>([])
        let report = DeviceReport(
            deviceClass: "Video/Source", displayName: "vivid", properties: ["device.path": "/dev/video0", "device.bus": "usb"],
            factory: "v4l2src", elementProperties: ["device": "/dev/video0"], formats: [Self.yuy2(640, 480)])
        let device = CaptureDevice(report: report) { path in
            asked.withLock { $0.append(path) }
            return []
        }
        #expect(device.uniqueID == "/dev/video0")
        #expect(device.kind == .system(factory: "v4l2src", properties: ["device": "/dev/video0"]))
        #expect(device.position == .external)
        #expect(!device.isPipeWire)
        #expect(device.devicePath == "/dev/video0" && device.v4l2Path == "/dev/video0")
        #expect(asked.value == ["/dev/video0"])
        let microphone = CaptureDevice(
            report: DeviceReport(
                deviceClass: "Audio/Source", displayName: "Mic", properties: [:], factory: "pulsesrc",
                elementProperties: ["device": "alsa_input.usb"], formats: []), controls: { _ in [] })
        #expect(microphone.uniqueID == "pulse:alsa_input.usb")
        #expect(microphone.mediaType == .audio)
    }

    @Test func theSourceSegmentSetsTheTargetAndGuardsAgainstReconfigure() throws {
        let device = CaptureDevice(report: Self.report(), controls: { _ in [] })
        let input = try CaptureDeviceInput(device: device, name: "camera")
        let segment = try GraphCompiler.sourceSegment(for: input, preset: .vga640x480, running: nil, controllable: true)
        #expect(segment.device == "pipewire:v4l2_input.platform-vivid.0")
        // The device's element and its format first (the control stages of a camera follow).
        #expect(segment.elements.prefix(2).map(\.factory) == ["pipewiresrc", "capsfilter"])
        #expect(
            segment.launchText.hasPrefix(
                "pipewiresrc name=camera_source always-copy=true max-buffers=4 min-buffers=4 target-object=v4l2_input.platform-vivid.0 ! "
                    + "capsfilter name=camera_format caps=\"video/x-raw,format=YUY2,width=640,height=480,framerate=25/1\""))
        #expect(segment.dropsReconfigure)
        #expect(segment.deliversDriverFrames)
        let v4l2 = EditPlannerTests.camera()
        #expect(!v4l2.dropsReconfigure)
        #expect(v4l2.deliversDriverFrames)
    }

    @Test func aPipeWireIdNoDaemonListsIsNotFound() {
        #expect(throws: CaptureError.deviceNotFound(id: "pipewire:no-such-node")) {
            try CaptureDevice.resolve("pipewire:no-such-node")
        }
    }
}
