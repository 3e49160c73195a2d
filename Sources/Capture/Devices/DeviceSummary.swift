import GStreamer

/// A device as `capture devices` shows it (Codable for `--json`).
public struct DeviceSummary: Codable, Sendable {
    /// One format of the device, as `capture devices` lists it.
    public struct Format: Codable, Sendable {
        /// The GStreamer media type (`video/x-raw`, `image/jpeg`, `audio/x-raw` ...).
        public var media: String
        /// The pixel or sample format, when the caps give one.
        public var format: String?
        /// The frame width in pixels, for video formats.
        public var width: Int?
        /// The frame height in pixels, for video formats.
        public var height: Int?
        /// The frame rates offered, in frames per second, fastest first.
        public var frameRates: [Double]
        /// The sample rate in Hz, for audio formats.
        public var sampleRate: Int?
        /// The number of channels, for audio formats.
        public var channels: Int?
    }
    /// One control of the device, as `capture devices` and `capture controls` list it.
    public struct Control: Codable, Sendable {
        /// The control's stable lower-case key ("brightness", "horizontal_flip").
        public var key: String
        /// The control's name as the driver gives it.
        public var name: String
        /// The control's kind: `integer`, `boolean`, `menu` ...
        public var type: String
        /// The smallest value the control takes.
        public var minimum: Int64
        /// The largest value the control takes.
        public var maximum: Int64
        /// The step between the values the control takes.
        public var step: UInt64
        /// The value the driver sets by default.
        public var defaultValue: Int64
        /// The current value, when the device lets it be read.
        public var value: Int64?
        /// For menu controls, the items by index (as text); nil for other controls.
        public var menu: [String: String]?
        /// True when a value can be written (not read-only, a kind that holds a number).
        public var settable: Bool
        /// True while the control has no effect (its automatic mode is on).
        public var inactive: Bool

        /// The summary of a device's control.
        public init(_ control: DeviceControl) {
            key = control.key
            name = control.name
            type = control.kind.rawValue
            minimum = control.minimum
            maximum = control.maximum
            step = control.step
            defaultValue = control.defaultValue
            value = control.value
            menu = control.menuItems.isEmpty ? nil : Dictionary(uniqueKeysWithValues: control.menuItems.map { (String($0.key), $0.value) })
            settable = control.isSettable
            inactive = control.isInactive
        }

        /// `brightness = 128 [0..255, default 128] (integer, settable)`.
        public var line: String {
            let state = [settable ? "settable" : "read-only", inactive ? "inactive" : nil].compactMap { $0 }.joined(separator: ", ")
            return "\(key) = \(value.map(String.init) ?? "?") [\(minimum)..\(maximum), default \(defaultValue)] (\(type), \(state))"
        }
    }
    /// The device's unique ID (`/dev/video0`, `test-pattern` ...).
    public var id: String
    /// The device's name for people.
    public var name: String
    /// `video` or `audio`.
    public var media: String
    /// Where the camera points: `front`, `back`, `external` or `unspecified`.
    public var position: String
    /// True for the virtual devices (test pattern, test tone, a media file).
    public var virtual: Bool
    /// The GStreamer source the device is opened with (`v4l2src`, `pipewiresrc`, `videotestsrc` ...).
    public var element: String
    /// The formats the device can be opened with.
    public var formats: [Format]
    /// The device's controls.
    public var controls: [Control]
    /// What the device can do with its controls (`DeviceCapabilities.summary`): focus-mode, zoom ...
    public var features: [String: String]
    /// The provider's properties (udev, driver ...).
    public var properties: [String: String]

    /// The summary of a device: its formats, controls and, for a camera, what it can do with them.
    public init(_ device: CaptureDevice) {
        id = device.uniqueID
        name = device.localizedName
        media = device.mediaType.rawValue
        position = device.position.rawValue
        virtual = device.isVirtual
        switch device.kind {
        case .system(let factory, _): element = factory
        case .testPattern: element = "videotestsrc"
        case .testTone: element = "audiotestsrc"
        case .file: element = "filesrc ! decodebin"
        }
        formats = device.formats.map {
            Format(
                media: $0.mediaSubtype, format: $0.pixelFormat, width: $0.size?.width, height: $0.size?.height,
                frameRates: $0.frameRates.map(\.value), sampleRate: $0.sampleRate, channels: $0.channels)
        }
        controls = device.controls.map(Control.init)
        let capabilities = ControlMapping.capabilities(of: device.controls, cropZoom: DeviceControlHub.shared.isControllable(device))
        features = device.mediaType == .video ? Dictionary(capabilities.summary, uniquingKeysWith: { first, _ in first }) : [:]
        properties = device.properties
    }

    /// Formats grouped for reading: "YUY2 640x480 @ 25, 20 fps".
    public var formatLines: [String] {
        if virtual && media == "video" && formats.count > 8 {
            let sizes = formats.compactMap { f in f.width.map { Size(width: $0, height: f.height ?? 0) } }
            let largest = sizes.max { $0.area < $1.area }
            return ["any standard size up to \(largest?.description ?? "?"), \(Set(formats.compactMap(\.format)).sorted().joined(separator: "/")), 5-60 fps"]
        }
        if media == "audio" {
            return formats.map { format in
                [format.format, format.sampleRate.map { "\($0) Hz" }, format.channels.map { "\($0) ch" }].compactMap { $0 }.joined(separator: " ")
            }
        }
        // One line per size and rates, listing the pixel formats offered there.
        var order: [String] = []
        var pixels: [String: [String]] = [:]
        for format in formats {
            let rates = format.frameRates.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ", ")
            let key = "\(format.width ?? 0)x\(format.height ?? 0) @ \(rates) fps"
            if pixels[key] == nil { order.append(key) }
            pixels[key, default: []].append(format.format ?? format.media)
        }
        return order.map { "\($0): \((pixels[$0] ?? []).joined(separator: " "))" }
    }
}

/// Facts about the GStreamer library in use, for `capture --version`.
public enum GStreamerInfo {
    /// Releases every process-wide GStreamer resource the library holds, then GStreamer itself, so that
    /// GStreamer's leaks tracer (GST_TRACERS=leaks) reports only real leaks. Call last, after every
    /// session has stopped.
    public static func shutdownForLeakCheck() {
        DeviceRegistry.shared.shutdown()
        GStreamer.deinitialize()
    }

    /// The version of the GStreamer library in use ("1.22.0"), or `unavailable` when GStreamer cannot be initialized.
    public static var version: String {
        (try? GStreamer.initialize()) != nil ? GStreamer.version : "unavailable"
    }
}
