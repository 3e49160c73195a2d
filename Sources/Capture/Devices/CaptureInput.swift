import Foundation

/// Options an input may carry besides its device.
public struct InputOptions: Hashable, Sendable {
    /// For `test-pattern`: the videotestsrc pattern nick ("smpte", "ball", "snow" ...).
    public var pattern: String?
    /// For the `inputPriority` preset: the size and frame rate asked of the device.
    public var size: Size?
    /// For the `inputPriority` preset: the frame rate asked of the device (nil: its best).
    public var frameRate: FrameRate?
    /// Fault injection for the virtual devices: the source fails with a streaming error after this
    /// many frames, as a disconnected camera does. Used by tests of the interruption path.
    public var failAfterFrames: Int?
    /// Survive a replug: when the device goes away the session stops (recordings are finished, as
    /// always), waits for the same device (by its id) to come back, starts again by itself, posts
    /// `resumed`, and a recording that was interrupted goes on in a new numbered file.
    public var reconnects: Bool

    /// Options for an input; every one is off or unset by default.
    /// - Parameters:
    ///   - pattern: The test pattern's videotestsrc pattern nick.
    ///   - size: The size asked of the device under the `inputPriority` preset.
    ///   - frameRate: The frame rate asked of the device under the `inputPriority` preset.
    ///   - failAfterFrames: For tests: a virtual device fails after this many frames.
    ///   - reconnects: True to wait for the device to come back after it goes away, and start again.
    public init(pattern: String? = nil, size: Size? = nil, frameRate: FrameRate? = nil, failAfterFrames: Int? = nil, reconnects: Bool = false) {
        self.pattern = pattern
        self.size = size
        self.frameRate = frameRate
        self.failAfterFrames = failAfterFrames
        self.reconnects = reconnects
    }
}

/// An input of a capture session: a device, like `AVCaptureDeviceInput`.
public final class CaptureDeviceInput: Sendable, CustomStringConvertible {
    /// The device the input captures from.
    public let device: CaptureDevice
    /// The input's name in the session (unique; used by outputs and `.pipeline` files).
    public let name: String
    /// The input's options (test pattern, requested size and frame rate, reconnection).
    public let options: InputOptions

    /// Makes an input for a device. Throws when the device is gone or cannot be opened.
    public init(device: CaptureDevice, name: String? = nil, options: InputOptions = InputOptions()) throws(CaptureError) {
        self.device = device
        self.name = name ?? (device.mediaType == .video ? "camera" : "microphone")
        self.options = options
        try Self.checkAccess(device)
    }

    /// Makes an input from the `device=` grammar (`default`, `test-pattern`, `/dev/video0`, `file:PATH` ...).
    public convenience init(deviceID: String, name: String? = nil, options: InputOptions = InputOptions()) throws(CaptureError) {
        try self.init(device: CaptureDevice.resolve(deviceID), name: name, options: options)
    }

    /// The device's media type: video or audio.
    public var mediaType: MediaType { device.mediaType }
    /// The input's name and its device's unique ID: `input 'camera' (/dev/video0)`.
    public var description: String { "input '\(name)' (\(device.uniqueID))" }

    /// Whether this process may open the device, asked before anything starts (the permission check an
    /// app falls back from, like a microphone the user may not use): a V4L2 node, or the ALSA capture
    /// node of an `alsasrc` device (`hw:1,0` is /dev/snd/pcmC1D0c), must exist and be readable and
    /// writable by this user. Devices behind a sound server are allowed or refused by the server when
    /// they start. Throws `device-not-found` or `permission-denied` naming the node.
    public static func checkAccess(_ device: CaptureDevice) throws(CaptureError) {
        guard let path = device.devicePath.flatMap(nodePath), path.hasPrefix("/dev/") else { return }
        guard FileManager.default.fileExists(atPath: path) else { throw .deviceNotFound(id: device.uniqueID) }
        guard access(path, R_OK | W_OK) == 0 else { throw .permissionDenied(id: device.uniqueID, path: path) }
    }

    /// The device node behind a source's `device` property: itself for a path, the ALSA capture node
    /// for `hw:CARD,DEV` / `plughw:CARD,DEV` with numeric card and device.
    static func nodePath(_ device: String) -> String? {
        if device.hasPrefix("/") { return device }
        for prefix in ["hw:", "plughw:"] where device.hasPrefix(prefix) {
            let parts = device.dropFirst(prefix.count).split(separator: ",")
            guard parts.count == 2, let card = Int(parts[0]), let number = Int(parts[1]) else { return nil }
            return "/dev/snd/pcmC\(card)D\(number)c"
        }
        return nil
    }
}
