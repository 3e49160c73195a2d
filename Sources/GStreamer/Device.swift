import CGStreamer
import CGStreamerShim

/// An owned `GstDevice` as reported by a device provider.
public final class Device: GObjectRef, @unchecked Sendable {
    // @unchecked: as GObjectRef; a device is read-only once its provider reported it.
    var device: UnsafeMutablePointer<GstDevice> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstDevice.self) }

    /// The name the provider shows for the device, or the object's name when it has none. The corresponding C
    /// function is `gst_device_get_display_name`.
    public var displayName: String { takeString(gst_device_get_display_name(device)) ?? name }
    /// "Video/Source", "Audio/Source" ...
    public var deviceClass: String { takeString(gst_device_get_device_class(device)) ?? "" }
    /// The formats the device can produce. The corresponding C function is `gst_device_get_caps`.
    public var caps: Caps? { gst_device_get_caps(device).map { Caps(owning: $0) } }
    /// The provider's properties ("device.path", "api.v4l2.path", "device.bus" ...).
    public var properties: Structure? {
        gst_device_get_properties(device).map { Structure(owning: $0) }
    }

    /// Makes the source element the provider recommends for this device.
    /// The corresponding C function is `gst_device_create_element`.
    public func createElement(name: String? = nil) -> Element? {
        gst_device_create_element(device, name).map {
            Element(floating: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self))
        }
    }
}

/// An owned `GstDeviceMonitor`.
public final class DeviceMonitor: GObjectRef, @unchecked Sendable {
    // @unchecked: as GObjectRef; GstDeviceMonitor locks its own state.
    var monitor: UnsafeMutablePointer<GstDeviceMonitor> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstDeviceMonitor.self) }

    /// A monitor for the given classes, e.g. ["Video/Source", "Audio/Source"].
    public static func make(classes: [String]) throws(GStreamerError) -> DeviceMonitor {
        try GStreamer.initialize()
        let monitor = DeviceMonitor(floating: UnsafeMutableRawPointer(gst_device_monitor_new()).assumingMemoryBound(to: GstObject.self))
        for deviceClass in classes {
            _ = gst_device_monitor_add_filter(monitor.monitor, deviceClass, nil)
        }
        return monitor
    }

    /// The devices present now. Starts probing if the monitor is not started.
    public var devices: [Device] {
        let head = gst_device_monitor_get_devices(monitor)
        var list = head
        var result: [Device] = []
        while let node = list {
            if let data = node.pointee.data {
                result.append(Device(full: data.assumingMemoryBound(to: GstObject.self)))
            }
            list = node.pointee.next
        }
        g_list_free(head)
        return result
    }

    /// Starts watching for hot-plug; messages arrive on `bus`. The corresponding C function is
    /// `gst_device_monitor_start`.
    public func start() -> Bool { gst_device_monitor_start(monitor) != 0 }
    /// Stops watching for hot-plug. The corresponding C function is `gst_device_monitor_stop`.
    public func stop() { gst_device_monitor_stop(monitor) }

    /// The bus the monitor posts its device-added, -removed and -changed messages on. The corresponding C
    /// function is `gst_device_monitor_get_bus`.
    public var bus: Bus {
        Bus(full: UnsafeMutableRawPointer(gst_device_monitor_get_bus(monitor)).assumingMemoryBound(to: GstObject.self))
    }
}

extension DeviceMonitor {
    /// GStreamer's pipewire device provider (PipeWire 0.3.65) turns every format a camera offers into
    /// caps with `gst_video_format_to_string`, and each format GStreamer has no name for fails that
    /// function's assertion: one GStreamer-Video CRITICAL on stderr per such format (84 for vivid), every
    /// time a program lists devices while PipeWire runs. This drops exactly that message; every other
    /// message goes to GLib's default handler as before. Installed once per process (in C:
    /// `capture_ignore_unknown_video_format_criticals`).
    public static func ignoreUnknownVideoFormatCriticals() {
        capture_ignore_unknown_video_format_criticals()
    }
}
