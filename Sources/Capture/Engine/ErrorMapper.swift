import Foundation
import GStreamer

/// Turns GStreamer's error messages into the capture errors they mean for the user.
///
/// The mapping works from the GError's domain and code, and from the flow return GStreamer adds to
/// the details of a stream that stopped; the debug text is read only where GStreamer gives nothing
/// else (an element that posts a flow error without details). `map` is pure and runs on the thread
/// that posted the message; `refined` asks the device what a message cannot tell (an ioctl), so it
/// runs on the session's own tasks, never on a GStreamer thread.
enum ErrorMapper {
    /// Which part of the session the posting element belongs to.
    enum Owner: Hashable, Sendable {
        case input(String)
        case output(String)
    }

    /// The capture error of a bus error. `device` is the input's device id when the owner is an input.
    static func map(_ error: BusError, owner: Owner?, device: String?) -> CaptureError {
        let inputName: String? = if case .input(let name)? = owner { name } else { nil }
        let id = device ?? inputName ?? error.source
        if error.isResourceError {
            switch error.code {
            case BusError.resourceBusy:
                return .deviceBusy(id: id, detail: error.message)
            case BusError.resourceNotAuthorized:
                return .permissionDenied(id: id, path: id)
            case BusError.resourceNotFound where inputName != nil:
                return .deviceNotFound(id: id)
            case BusError.resourceOpenRead, BusError.resourceOpenReadWrite:
                // v4l2src says which in the system error it appends ("... Permission denied").
                switch error.systemError?.number {
                case EACCES, EPERM: return .permissionDenied(id: id, path: id)
                case EBUSY: return .deviceBusy(id: id, detail: error.message)
                default:
                    let text = (error.debug ?? "") + error.message
                    if text.contains("Permission denied") { return .permissionDenied(id: id, path: id) }
                    if text.contains("busy") { return .deviceBusy(id: id, detail: error.message) }
                }
            case BusError.resourceSettings where inputName != nil, BusError.resourceNoSpaceLeft where inputName != nil:
                // v4l2src posts these when the driver refuses its buffers or VIDIOC_STREAMON ("Failed to
                // allocate required memory", which sends users looking for RAM) or a setting.
                let buffers = (error.debug ?? "").contains("Buffer pool activation failed")
                let what = buffers ? "the driver refused to start streaming or to allocate its buffers" : "the driver refused the settings"
                return .deviceStartFailed(id: id, detail: "\(what) (\(error.message))")
            default:
                break
            }
        }
        if error.flowReturn == BusError.flowNotNegotiated || (error.flowReturn == nil && (error.debug ?? "").contains("not-negotiated")) {
            return .formatNotNegotiated(input: inputName ?? error.source, detail: error.message)
        }
        var text = error.message
        if let system = error.systemError { text += " (\(system.text))" }
        let element = device.map { $0 == error.source ? error.source : "\($0) (\(error.source))" } ?? error.source
        return .streamingFailed(element: element, message: text, debug: error.debug)
    }

    /// What only the device can tell: a V4L2 node that another process streams from refuses every
    /// format, so "not negotiated" there means busy. Blocking (an ioctl): call it off GStreamer's threads.
    static func refined(_ error: CaptureError, device: String?) -> CaptureError {
        guard case .formatNotNegotiated = error, let device, device.hasPrefix("/dev/video"),
            DeviceControl.isBusy(devicePath: device)
        else { return error }
        return .deviceBusy(id: device, detail: "another program is streaming from it")
    }

    /// Whether a source's error means its device went away (unplugged, or its driver disconnected it)
    /// rather than failed while present. A read error alone does not tell: v4l2src reports vivid's
    /// driver-side disconnect and its fatal streaming error with the same "poll error 1: Invalid
    /// argument (22)". So a V4L2 node is asked (`devicePresent`: it opens and answers QUERYCAP, which an
    /// unplugged or disconnected device refuses with ENOENT/ENODEV); for other sources the system
    /// error decides: anything but an I/O error means the device is gone.
    static func meansDisconnection(_ error: BusError, devicePresent: Bool?) -> Bool {
        guard error.isResourceError, error.code == BusError.resourceRead || error.code == BusError.resourceNotFound else { return false }
        if let devicePresent { return !devicePresent }
        return error.systemError?.number != EIO
    }

    /// Asks a V4L2 node whether it is still there (nil for other devices). Blocking: off GStreamer's threads.
    static func devicePresent(_ device: String) -> Bool? {
        device.hasPrefix("/dev/video") ? DeviceControl.isPresent(devicePath: device) : nil
    }
}
