/// A device as `capture devices` shows it (Codable for `--json`).
public struct DeviceSummary: Codable, Sendable {
    public struct Format: Codable, Sendable {
        public var media: String
        public var format: String?
        public var width: Int?
        public var height: Int?
        public var frameRates: [Double]
        public var sampleRate: Int?
        public var channels: Int?
    }
    public struct Control: Codable, Sendable {
        public var key: String
        public var name: String
        public var type: String
        public var minimum: Int64
        public var maximum: Int64
        public var step: UInt64
        public var defaultValue: Int64
        public var value: Int64?
        public var menu: [String: String]?
        /// True when a value can be written (not read-only, a kind that holds a number).
        public var settable: Bool
        /// True while the control has no effect (its automatic mode is on).
        public var inactive: Bool

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
    public var id: String
    public var name: String
    public var media: String
    public var position: String
    public var virtual: Bool
    public var element: String
    public var formats: [Format]
    public var controls: [Control]
    /// What the device can do with its controls (`DeviceCapabilities.summary`): focus-mode, zoom ...
    public var features: [String: String]
    public var properties: [String: String]

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
            Format(media: $0.mediaSubtype, format: $0.pixelFormat, width: $0.size?.width, height: $0.size?.height,
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

import GStreamer

/// Facts about the GStreamer library in use, for `capture --version`.
public enum GStreamerInfo {
    /// Releases every process-wide GStreamer resource the library holds, then GStreamer itself, so that
    /// GStreamer's leaks tracer (GST_TRACERS=leaks) reports only real leaks. Call last, after every
    /// session has stopped.
    public static func shutdownForLeakCheck() {
        DeviceRegistry.shared.shutdown()
        GStreamer.deinitialize()
    }

    public static var version: String {
        (try? GStreamer.initialize()) != nil ? GStreamer.version : "unavailable"
    }
}
