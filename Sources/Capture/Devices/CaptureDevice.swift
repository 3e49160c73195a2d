import Foundation
import GStreamer

/// How a device's source is made in the pipeline. Only this differs between a real camera and the
/// virtual ones; everything downstream of the source is the same engine path.
public enum DeviceKind: Sendable, Equatable, Hashable {
    /// A device found by GStreamer's device monitor (v4l2src, pulsesrc, alsasrc ...), made from
    /// its factory and identifying properties.
    case system(factory: String, properties: [String: String])
    /// Live `videotestsrc`, any size up to 3840x2160.
    case testPattern
    /// Live `audiotestsrc`.
    case testTone
    /// A media file replayed as a live camera at its own frame rate.
    case file(path: String)
}

/// A capture device: a camera, a microphone, or one of the virtual devices (`test-pattern`,
/// `test-tone`, `file:PATH`). Like `AVCaptureDevice`.
public final class CaptureDevice: Sendable, Hashable, CustomStringConvertible {
    /// Stable id: the device path for V4L2 cameras (`/dev/video0`), `pipewire:NODE-NAME` for cameras
    /// through PipeWire (`pipewire:v4l2_input.platform-vivid.0`), `pulse:NAME`/`alsa:NAME` for
    /// microphones, `test-pattern`, `test-tone`, `file:PATH` for virtual devices.
    public let uniqueID: String
    /// The device's name for people, as the system reports it (`Integrated Camera`, `Test Pattern (virtual camera)`).
    public let localizedName: String
    /// Whether the device captures video or audio.
    public let mediaType: MediaType
    /// Where the camera points, when the device says so; `unspecified` otherwise.
    public let position: DevicePosition
    /// The formats the device can be opened with, largest first.
    public let formats: [DeviceFormat]
    /// How the device's source is made in the pipeline: a system device or a virtual one.
    public let kind: DeviceKind
    /// The provider's properties (udev, driver ...), for display.
    public let properties: [String: String]
    /// The device's controls as it reports them (V4L2 controls for cameras).
    public let controls: [DeviceControl]

    /// A device as described; the session opens it the way `kind` says. Devices are usually found with
    /// ``devices`` or ``DiscoverySession`` rather than made.
    public init(
        uniqueID: String, localizedName: String, mediaType: MediaType, position: DevicePosition = .unspecified,
        formats: [DeviceFormat], kind: DeviceKind, properties: [String: String] = [:], controls: [DeviceControl] = []
    ) {
        self.uniqueID = uniqueID
        self.localizedName = localizedName
        self.mediaType = mediaType
        self.position = position
        self.formats = formats
        self.kind = kind
        self.properties = properties
        self.controls = controls
    }

    /// What identifies the device across a replug, when its node may come back under another number:
    /// the physical port (udev's `ID_PATH`) or the driver's bus info with the device's name, and its
    /// serial number when it has one; the unique id for devices that say none of these.
    public var stableID: String {
        // A PipeWire camera's id is its node name, which PipeWire keeps across replugs already.
        if isPipeWire { return uniqueID }
        let port = properties["device.bus_path"] ?? properties["api.v4l2.cap.bus_info"] ?? properties["v4l2.device.bus_info"]
        guard let port else { return uniqueID }
        return [port, localizedName, properties["device.serial"]].compactMap { $0 }.joined(separator: "|")
    }

    /// True for the virtual devices (test pattern, test tone, a media file); false for a device of the system.
    public var isVirtual: Bool {
        switch kind {
        case .system: false
        default: true
        }
    }

    /// The device node a V4L2 camera is opened through, when it has one (a camera through PipeWire is
    /// opened through the PipeWire daemon: nil).
    public var devicePath: String? {
        if case .system(_, let properties) = kind { return properties["device"] }
        return nil
    }

    /// True for a camera PipeWire hands out (opened with `pipewiresrc`; several programs can read it at once).
    public var isPipeWire: Bool {
        if case .system(PipeWireCamera.factory, _) = kind { return true }
        return false
    }

    /// The V4L2 node behind the camera, where its controls are read and set: its own node, or for a camera
    /// through PipeWire the node PipeWire opened (`api.v4l2.path`). Nil for other devices.
    public var v4l2Path: String? {
        if isPipeWire { return properties["api.v4l2.path"] }
        if case .system("v4l2src", let properties) = kind { return properties["device"] }
        return nil
    }

    /// The same device: the same unique ID and the same kind.
    public static func == (lhs: CaptureDevice, rhs: CaptureDevice) -> Bool { lhs.uniqueID == rhs.uniqueID && lhs.kind == rhs.kind }
    /// Hashes the unique ID.
    public func hash(into hasher: inout Hasher) { hasher.combine(uniqueID) }
    /// The name with the unique ID: `Integrated Camera (/dev/video0)`.
    public var description: String { "\(localizedName) (\(uniqueID))" }

    // MARK: Virtual devices

    /// The live test pattern: videotestsrc, any standard size up to 3840x2160.
    public static let testPattern = CaptureDevice(
        uniqueID: "test-pattern", localizedName: "Test Pattern (virtual camera)", mediaType: .video,
        position: .unspecified,
        formats: Size.standard.reversed().flatMap { size in
            ["I420", "YUY2", "RGBx"].map {
                DeviceFormat(
                    mediaSubtype: "video/x-raw", pixelFormat: $0, size: size,
                    frameRates: size.area > 1920 * 1080 ? [FrameRate(30), FrameRate(15), FrameRate(5)] : FrameRate.standard)
            }
        },
        kind: .testPattern, controls: TestPatternControls.descriptions)

    /// The live test tone: audiotestsrc.
    public static let testTone = CaptureDevice(
        uniqueID: "test-tone", localizedName: "Test Tone (virtual microphone)", mediaType: .audio,
        formats: [DeviceFormat(mediaSubtype: "audio/x-raw", pixelFormat: "S16LE", size: nil, frameRates: [], sampleRate: 48000, channels: 2)],
        kind: .testTone)

    /// A media file replayed as a live camera. The file's formats are read with GstDiscoverer.
    public static func file(_ path: String) throws(CaptureError) -> CaptureDevice {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: url.path) else { throw .deviceNotFound(id: "file:\(path)") }
        if let kind = FileNaming.notARegularFile(url.path) { throw .notAMediaFile(path: path, reason: "it is \(kind)") }
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw .permissionDenied(id: "file:\(path)", path: url.path) }
        guard let info = MediaInfo.discover(url.path), info.video != nil || info.audio != nil else {
            throw .notAMediaFile(path: path, reason: "GStreamer found no audio or video stream in it")
        }
        let media: MediaType = info.video != nil ? .video : .audio
        var formats: [DeviceFormat] = []
        if let video = info.video {
            formats.append(
                DeviceFormat(
                    mediaSubtype: "video/x-raw", pixelFormat: nil, size: Size(width: video.width, height: video.height),
                    frameRates: [FrameRate(video.frameRateNumerator, video.frameRateDenominator)]))
        }
        return CaptureDevice(
            uniqueID: "file:\(path)", localizedName: "File \(url.lastPathComponent) (virtual camera)",
            mediaType: media, formats: formats, kind: .file(path: url.path))
    }
}

extension CaptureDevice {
    /// Every device of the machine (real ones first, then the virtual `test-pattern` and `test-tone`).
    public static var devices: [CaptureDevice] {
        DeviceRegistry.shared.realDevices + [testPattern, testTone]
    }

    /// The default device for a media type, like `AVCaptureDevice.default(for:)`: the first real one,
    /// else nil (a machine without a camera has no default camera; the test pattern is never one).
    public static func `default`(for media: MediaType) -> CaptureDevice? {
        DeviceRegistry.shared.realDevices.first { $0.mediaType == media }
    }

    /// The first real device of a media type at a position (`.front`, `.back` ...), else nil.
    public static func `default`(for media: MediaType, position: DevicePosition) -> CaptureDevice? {
        DeviceRegistry.shared.realDevices.first { $0.mediaType == media && $0.position == position }
    }

    /// The camera to switch to from `device`: the one at `position` when given; else the one at the
    /// opposite position (front and back); else the next camera of `devices` (real ones, then the test
    /// pattern), wrapping around. Nil when there is no other camera.
    public static func camera(
        after device: CaptureDevice, position: DevicePosition? = nil, among devices: [CaptureDevice] = CaptureDevice.devices
    ) -> CaptureDevice? {
        let cameras = devices.filter { $0.mediaType == .video && !isFileDevice($0) }
        if let position { return cameras.first { $0.position == position && $0 != device } }
        let opposite: DevicePosition? = device.position == .front ? .back : device.position == .back ? .front : nil
        if let opposite, let found = cameras.first(where: { $0.position == opposite }) { return found }
        guard let index = cameras.firstIndex(of: device) else { return cameras.first { $0 != device } }
        let next = cameras[(index + 1) % cameras.count]
        return next == device ? nil : next
    }

    private static func isFileDevice(_ device: CaptureDevice) -> Bool {
        if case .file = device.kind { return true }
        return false
    }

    /// The device with that id or path, or a typed error pointing to `capture devices`.
    public convenience init(uniqueID id: String) throws(CaptureError) {
        let device = try CaptureDevice.resolve(id)
        self.init(
            uniqueID: device.uniqueID, localizedName: device.localizedName, mediaType: device.mediaType,
            position: device.position, formats: device.formats, kind: device.kind, properties: device.properties,
            controls: device.controls)
    }

    /// Resolves the `device=` grammar of `.pipeline` files and `-i` of the CLI: `default`,
    /// `default-audio`, `test-pattern`, `test-tone`, `file:PATH`, `/dev/videoN`, or a device id (such as
    /// `pipewire:NODE-NAME` for a camera through PipeWire, listed while a PipeWire daemon runs).
    /// `/dev/videoN` always opens the node itself with v4l2src, also while PipeWire lists the camera.
    /// `default` is the first camera and `default-audio` the first microphone (`default(for:)`); on a
    /// machine without one they throw `noDeviceAvailable`, never stand in a virtual device: the test
    /// pattern and the test tone are used only where they are named (or named as a fallback).
    public static func resolve(_ spec: String) throws(CaptureError) -> CaptureDevice {
        switch spec {
        case "default", "default-video":
            guard let camera = `default`(for: .video) else { throw .noDeviceAvailable(media: .video) }
            return camera
        case "default-audio":
            guard let microphone = `default`(for: .audio) else { throw .noDeviceAvailable(media: .audio) }
            return microphone
        case "test-pattern": return testPattern
        case "test-tone": return testTone
        default: break
        }
        if spec.hasPrefix("file:") { return try file(String(spec.dropFirst(5))) }
        let real = DeviceRegistry.shared.realDevices
        if let found = real.first(where: { $0.uniqueID == spec || $0.devicePath == spec }) { return found }
        if spec.hasPrefix("/dev/video") {
            // A node the monitor does not list (no udev, e.g. in a container): open it directly.
            guard FileManager.default.fileExists(atPath: spec) else { throw .deviceNotFound(id: spec) }
            return v4l2Node(spec)
        }
        throw .deviceNotFound(id: spec)
    }

    /// A V4L2 node opened directly (when GstDeviceMonitor cannot see it, e.g. without udev). Its formats
    /// are probed from the v4l2src element itself.
    static func v4l2Node(_ path: String) -> CaptureDevice {
        var formats: [DeviceFormat] = []
        if let source = try? Element.make("v4l2src") {
            try? source.set("device", path)
            if (try? source.setState(.ready)) != nil, let pad = source.staticPad("src") {
                if let caps = pad.queryCaps() { formats = DeviceFormat.formats(from: caps) }
            }
            _ = try? source.setState(.null)
        }
        return CaptureDevice(
            uniqueID: path, localizedName: "V4L2 camera \(path)", mediaType: .video, formats: formats,
            kind: .system(factory: "v4l2src", properties: ["device": path]), controls: DeviceControl.read(devicePath: path))
    }
}

/// A discovery session: the devices of some media types and positions, like
/// `AVCaptureDevice.DiscoverySession`.
public struct DiscoverySession: Sendable {
    /// The media types of the devices to list.
    public var mediaTypes: Set<MediaType>
    /// The positions of the devices to list; empty for any position.
    public var positions: Set<DevicePosition>
    /// True to list the virtual test pattern and test tone with the system's devices.
    public var includeVirtual: Bool

    /// A discovery of the devices of `mediaTypes` at `positions` (any when empty), virtual ones included unless `includeVirtual` is false.
    public init(mediaTypes: Set<MediaType> = [.video], positions: Set<DevicePosition> = [], includeVirtual: Bool = true) {
        self.mediaTypes = mediaTypes
        self.positions = positions
        self.includeVirtual = includeVirtual
    }

    /// The devices that match, as they are now: the system's devices first, then the virtual ones.
    public var devices: [CaptureDevice] {
        let all = includeVirtual ? CaptureDevice.devices : DeviceRegistry.shared.realDevices
        return all.filter { mediaTypes.contains($0.mediaType) && (positions.isEmpty || positions.contains($0.position)) }
    }
}

/// A hot-plug notification, like `AVCaptureDevice.wasConnectedNotification` /
/// `wasDisconnectedNotification`.
public enum DeviceEvent: Sendable {
    /// A device was plugged in.
    case connected(CaptureDevice)
    /// A device was unplugged.
    case disconnected(CaptureDevice)

    /// The device that was connected or disconnected.
    public var device: CaptureDevice {
        switch self {
        case .connected(let device), .disconnected(let device): device
        }
    }

    /// The event's name as in the `.pipeline` contract: `device-connected` or `device-disconnected`.
    public var name: String {
        switch self {
        case .connected: "device-connected"
        case .disconnected: "device-disconnected"
        }
    }
}

extension CaptureDevice {
    /// Devices connected and disconnected from now on, for the whole process (no session needed): a
    /// camera plugged in, unplugged, or its driver unbound and bound again. The stream ends when the
    /// process shuts the device monitor down. Devices present already are in `devices`.
    public static func connectionEvents() -> AsyncStream<DeviceEvent> {
        let stream = DeviceRegistry.shared.events.stream()
        DeviceRegistry.shared.startIfNeeded()
        return stream
    }
}

/// The process-wide view of the machine's devices, kept current by a GstDeviceMonitor.
final class DeviceRegistry: Sendable {
    static let shared = DeviceRegistry()

    private struct State {
        var monitor: DeviceMonitor?
        var devices: [CaptureDevice] = []
        var started = false
        /// True while the monitor starts: the devices it finds then were there already, not connected.
        var populating = false
    }
    private let state = Locked(State())
    let events = Broadcaster<DeviceEvent>()

    /// Stops the monitor and forgets the devices (process shutdown, leak checks).
    func shutdown() {
        let monitor = state.withLock { state -> DeviceMonitor? in
            defer { state.monitor = nil; state.devices.removeAll() }
            return state.monitor
        }
        monitor?.stop()
        monitor?.bus.setFlushing(true)
        monitor?.bus.removeSyncHandler()
        events.finish()
    }

    /// Real devices, starting the monitor on first use.
    var realDevices: [CaptureDevice] {
        startIfNeeded()
        return state.withLock { $0.devices }
    }

    func startIfNeeded() {
        let needsStart = state.withLock { state -> Bool in
            if state.started { return false }
            state.started = true
            state.populating = true
            return true
        }
        guard needsStart, (try? GStreamer.initialize()) != nil,
            let monitor = try? DeviceMonitor.make(classes: ["Video/Source", "Audio/Source"])
        else { return }
        DeviceMonitor.ignoreUnknownVideoFormatCriticals()
        monitor.bus.setSyncHandler { [weak self] message in
            guard let self, let device = message.device else { return }
            switch message.kind {
            case .deviceAdded:
                let captured = CaptureDevice(monitored: device)
                let isNew = self.state.withLock { state -> Bool in
                    guard !state.devices.contains(where: { $0.uniqueID == captured.uniqueID }) else { return false }
                    state.devices.append(captured)
                    return !state.populating
                }
                if isNew { self.events.post(.connected(captured)) }
            case .deviceRemoved:
                // Only the id is needed: the node may be gone already, its controls are not read.
                let id = DeviceReport(device).source.id
                let removed = self.state.withLock { state -> CaptureDevice? in
                    guard let index = state.devices.firstIndex(where: { $0.uniqueID == id }) else { return nil }
                    return state.devices.remove(at: index)
                }
                if let removed { self.events.post(.disconnected(removed)) }
            default: break
            }
        }
        _ = monitor.start()
        let found = monitor.devices.map(CaptureDevice.init(monitored:))
        state.withLock { state in
            state.monitor = monitor
            state.populating = false
            for device in found where !state.devices.contains(where: { $0.uniqueID == device.uniqueID }) {
                state.devices.append(device)
            }
            state.devices.sort { ($0.mediaType.rawValue, $0.uniqueID) > ($1.mediaType.rawValue, $1.uniqueID) }
        }
    }
}

extension CaptureDevice {
    /// Builds a device from what the monitor reports.
    convenience init(monitored device: Device) {
        self.init(report: DeviceReport(device))
    }

    /// Builds a device from a provider's report (pure but for `controls`, which reads a V4L2 node's
    /// controls: `DeviceControl.read(devicePath:)` unless a test gives another).
    convenience init(report: DeviceReport, controls readControls: (String) -> [DeviceControl] = DeviceControl.read(devicePath:)) {
        let source = report.source
        self.init(
            uniqueID: source.id, localizedName: report.displayName, mediaType: report.mediaType, position: report.position,
            formats: report.usableFormats, kind: .system(factory: source.factory, properties: source.properties),
            properties: report.properties, controls: source.controlPath.map(readControls) ?? [])
    }
}

/// What a device provider reports of one device, as plain values: the provider's properties, the
/// element it recommends (factory and identifying properties) and the formats of its caps.
/// `CaptureDevice(report:)` maps it to a device; tests build it by hand.
struct DeviceReport: Sendable {
    var deviceClass: String
    var displayName: String
    /// The provider's properties (udev's for V4L2, the node's for PipeWire).
    var properties: [String: String]
    /// The factory of the element the provider makes (nil when it made none).
    var factory: String?
    /// That element's identifying properties that are set (device, path ...).
    var elementProperties: [String: String]
    var formats: [DeviceFormat]

    /// The element properties that identify a device, read from the element the provider makes.
    static let identifyingProperties = ["device", "device-path", "device-name", "path", "camera-name"]

    init(
        deviceClass: String, displayName: String, properties: [String: String], factory: String?,
        elementProperties: [String: String] = [:], formats: [DeviceFormat]
    ) {
        self.deviceClass = deviceClass
        self.displayName = displayName
        self.properties = properties
        self.factory = factory
        self.elementProperties = elementProperties
        self.formats = formats
    }

    init(_ device: Device) {
        var properties: [String: String] = [:]
        if let structure = device.properties {
            for field in structure.fieldNames {
                properties[field] = structure.string(field) ?? structure.serialized(field)
            }
        }
        var factory: String?
        var elementProperties: [String: String] = [:]
        if let element = device.createElement() {
            factory = element.factoryName
            for key in Self.identifyingProperties where element.hasProperty(key) {
                if let value = element.string(key), !value.isEmpty, value != "NULL" { elementProperties[key] = value }
            }
        }
        self.init(
            deviceClass: device.deviceClass, displayName: device.displayName, properties: properties, factory: factory,
            elementProperties: elementProperties, formats: device.caps.map(DeviceFormat.formats(from:)) ?? [])
    }

    var mediaType: MediaType { deviceClass.hasPrefix("Audio") ? .audio : .video }

    /// A camera PipeWire hands out (GStreamer's pipewire device provider, element `pipewiresrc`).
    var isPipeWire: Bool { factory == PipeWireCamera.factory }

    /// How the device is opened: its id, the source element and the properties that select it, and
    /// the V4L2 node its controls are read from.
    var source: (id: String, factory: String, properties: [String: String], controlPath: String?) {
        if isPipeWire {
            let target = PipeWireCamera.target(properties)
            let id = target.map(PipeWireCamera.id(nodeName:)) ?? "\(PipeWireCamera.factory):\(displayName)"
            var sourceProperties = PipeWireCamera.fixedProperties
            if let target { sourceProperties[PipeWireCamera.targetProperty] = target }
            return (id, PipeWireCamera.factory, sourceProperties, properties["api.v4l2.path"])
        }
        let factory = factory ?? (mediaType == .video ? "v4l2src" : "pulsesrc")
        var sourceProperties = elementProperties
        let path = properties["api.v4l2.path"] ?? properties["device.path"] ?? sourceProperties["device"]
        if factory == "v4l2src", let path { sourceProperties["device"] = path }
        let id: String
        if factory == "v4l2src", let path {
            id = path
        } else if let name = sourceProperties["device"] {
            id = "\(factory.replacingOccurrences(of: "src", with: "")):\(name)"
        } else {
            id = "\(factory):\(displayName)"
        }
        return (id, factory, sourceProperties, factory == "v4l2src" ? path : nil)
    }

    var position: DevicePosition {
        if let location = properties["api.libcamera.location"] ?? properties["device.position"] {
            return location.contains("front") ? .front : location.contains("back") ? .back : .external
        }
        let busInfo = properties["api.v4l2.cap.bus_info"] ?? properties["v4l2.device.bus_info"] ?? ""
        return properties["device.bus"] == "usb" || busInfo.hasPrefix("usb-") ? .external : .unspecified
    }

    /// The formats the device can be opened with. pipewiresrc negotiates only caps that give a pixel
    /// format, a size and a frame rate (others wait 30 s, then fail not-negotiated), and PipeWire lists
    /// raw formats GStreamer has no name for (caps entries without a `format` field): those are left out.
    var usableFormats: [DeviceFormat] {
        guard isPipeWire else { return formats }
        return formats.filter { format in
            (format.mediaSubtype != "video/x-raw" || format.pixelFormat != nil) && format.size != nil && !format.frameRates.isEmpty
        }
    }
}

/// Cameras through PipeWire: how their ids and source properties are made.
enum PipeWireCamera {
    static let factory = "pipewiresrc"
    static let idPrefix = "pipewire:"
    /// The pipewiresrc property that selects the node: its `node.name` (stable across daemon restarts and
    /// replugs, unlike `object.serial`).
    static let targetProperty = "target-object"

    /// Properties every PipeWire camera source gets (measured in the hardware tier, vivid at 640x480@25):
    /// - `always-copy`: each frame is copied out of PipeWire's buffer, which goes back to PipeWire at
    ///   once. Without it the frames a branch holds (a queue before a busy encoder, a photo waiting to be
    ///   encoded, a frame a program keeps) keep PipeWire's buffers, and pipewiresrc 0.3.65 then loses
    ///   frames ("buffer was not recycled", during photo -> video -> photo cycles).
    /// - 4 buffers between the camera and this program (pipewiresrc asks for 16 by default): when the
    ///   session falls behind (a busy encoder), frames wait in PipeWire's queue, and with 16 they arrived
    ///   up to 653 ms after they were taken (a recording then lost its last half second); with 4, up to
    ///   177 ms, close to v4l2src (126 ms).
    static let fixedProperties = ["always-copy": "true", "min-buffers": "4", "max-buffers": "4"]

    static func id(nodeName: String) -> String { idPrefix + nodeName }

    /// What `target-object` is set to: the node's name, else (a node without a name) its serial.
    static func target(_ properties: [String: String]) -> String? {
        for key in ["node.name", "object.serial"] {
            if let value = properties[key], !value.isEmpty { return value }
        }
        return nil
    }
}
