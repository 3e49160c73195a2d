import Foundation
import Synchronization

/// The process-wide side of device configuration: who holds each device's configuration lock, what
/// the process keeps about a device besides its controls (the crop zoom, points of interest, the
/// flash mode photos use, one-shot modes still settling), each device's control backend, and the
/// running source segments that stream each device (their taps), where simulated controls and the crop
/// zoom are applied and a change's first frame is recognised.
///
/// Everything here runs on the caller's thread (the user's task, the scenario runner, the CLI, a photo
/// request): device ioctls never run on a streaming thread.
final class DeviceControlHub: Sendable {
    static let shared = DeviceControlHub()

    private struct DeviceState {
        var holder: String?
        var cropZoom = 1.0
        var focusPoint = NormalizedPoint(x: 0.5, y: 0.5)
        var exposurePoint = NormalizedPoint(x: 0.5, y: 0.5)
        var flashMode: FlashMode = .off
        /// The last exposure request asked for a custom exposure (V4L2 says "manual" for locked and custom).
        var exposureCustom = false
        /// One-shot modes still running their automatic mode, by feature, with the token of the request.
        var settling: [Feature: Int] = [:]
    }

    /// The features whose one-shot modes settle and then lock.
    enum Feature: Sendable, Hashable { case focus, exposure, whiteBalance }

    private let states = Locked<[String: DeviceState]>([:])
    private let taps = Locked<[Int: SourceTap]>([:])
    private let backends = Locked<[String: any ControlBackend]>([:])
    private let nextToken = Atomic<Int>(0)
    /// Where one-shot modes lock once settled (an ioctl: off the streaming threads and the caller's).
    private let settleQueue = DispatchQueue(label: "capture.device-controls.settle")

    // MARK: Backends

    /// Makes `backend` the controls of the device with that id (tests describe devices this way).
    func install(_ backend: any ControlBackend, for device: String) {
        backends.withLock { $0[device] = backend }
    }

    /// The device's control backend: an installed one, the test pattern's simulated controls (one set
    /// per device id), a V4L2 node (a camera's own, or the one PipeWire opened for a camera through
    /// PipeWire: V4L2 lets any program that may open the node read and set its controls while another
    /// streams), or nil for a device without controls (a file, a microphone).
    func backend(for device: CaptureDevice) -> (any ControlBackend)? {
        backends.withLock { backends -> (any ControlBackend)? in
            if let installed = backends[device.uniqueID] { return installed }
            switch device.kind {
            case .testPattern:
                let simulated = TestPatternControls()
                backends[device.uniqueID] = simulated
                return simulated
            case .system(let factory, _) where factory == "v4l2src" || factory == PipeWireCamera.factory:
                return device.v4l2Path.map(V4L2NodeControls.init(path:))
            default:
                return nil
            }
        }
    }

    /// True for the devices whose source segments carry control stages: cameras and the test pattern.
    func isControllable(_ device: CaptureDevice) -> Bool {
        guard device.mediaType == .video else { return false }
        switch device.kind {
        case .system, .testPattern: return true
        case .file, .testTone: return false
        }
    }

    /// Cameras without a zoom control zoom by a crop in the session.
    private func cropZoom(_ device: CaptureDevice) -> Bool { isControllable(device) }

    // MARK: The configuration lock

    func lock(_ device: String, holder: String) throws(CaptureError) {
        try states.withLock { states throws(CaptureError) in
            if let current = states[device]?.holder { throw .deviceLocked(device: device, holder: current) }
            states[device, default: DeviceState()].holder = holder
        }
    }

    func unlock(_ device: String) {
        states.withLock { _ = $0[device]?.holder = nil }
    }

    func holder(of device: String) -> String? {
        states.withLock { $0[device]?.holder }
    }

    // MARK: Reading

    /// The device's controls now, read from it; a device that went away is a typed error naming `control`.
    func controls(of device: CaptureDevice, for control: String = "its controls") throws(CaptureError) -> [DeviceControl] {
        guard let backend = backend(for: device) else { return [] }
        do {
            return try backend.controls()
        } catch {
            throw Self.failure(error, device: device.uniqueID, control: control)
        }
    }

    /// What the device can do (nothing, when its controls cannot be read).
    func capabilities(of device: CaptureDevice) -> DeviceCapabilities {
        ControlMapping.capabilities(of: (try? controls(of: device)) ?? [], cropZoom: cropZoom(device))
    }

    /// The device's settings: what its controls say, and what the process keeps.
    func settings(of device: CaptureDevice) -> DeviceSettings {
        var settings = ControlMapping.settings(of: (try? controls(of: device)) ?? [])
        let state = states.withLock { $0[device.uniqueID] } ?? DeviceState()
        if state.settling[.focus] != nil { settings.focusMode = .autoFocus }
        if state.settling[.exposure] != nil {
            settings.exposureMode = .autoExpose
        } else if state.exposureCustom, settings.exposureMode == .locked {
            settings.exposureMode = .custom
        }
        if state.settling[.whiteBalance] != nil { settings.whiteBalanceMode = .autoWhiteBalance }
        if settings.zoomFactor == nil, cropZoom(device) { settings.zoomFactor = state.cropZoom }
        return settings
    }

    func points(of device: String) -> (focus: NormalizedPoint, exposure: NormalizedPoint) {
        let state = states.withLock { $0[device] } ?? DeviceState()
        return (state.focusPoint, state.exposurePoint)
    }

    func flashMode(of device: String) -> FlashMode {
        states.withLock { $0[device]?.flashMode } ?? .off
    }

    // MARK: Changing

    /// Applies a request: checks the lock (unless `requireLock` is false: the session's own flash for a
    /// photo), plans it against the device's controls, writes the controls in order, keeps what the
    /// process keeps, applies simulated controls and the crop zoom to the running source segments, and
    /// arms each of them to report the change's first frame.
    func apply(_ request: ControlRequest, to device: CaptureDevice, requireLock: Bool = true) throws(CaptureError) -> DeviceChange {
        let id = device.uniqueID
        if requireLock, holder(of: id) == nil { throw .deviceNotLocked(device: id, control: request.summary) }
        let backend = backend(for: device)
        let controls = try self.controls(of: device, for: request.summary)
        var request = request
        switch request {
        case .focusPoint(let point, nil): request = .focusPoint(point, frame: frameSize(of: device, backend))
        case .exposurePoint(let point, nil): request = .exposurePoint(point, frame: frameSize(of: device, backend))
        default: break
        }
        let plan = try ControlMapping.plan(request, controls: controls, device: id, cropZoom: cropZoom(device))
        if let backend {
            for write in plan.writes { try Self.write(write, to: backend, device: id) }
        }
        let token = nextToken.add(1, ordering: .relaxed).newValue
        let feature = Self.feature(of: request)
        states.withLock { states in
            var state = states[id] ?? DeviceState()
            if let zoom = plan.cropZoom { state.cropZoom = zoom }
            if let mode = plan.flashMode { state.flashMode = mode }
            switch request {
            case .focusPoint(let point, _): state.focusPoint = point
            case .exposurePoint(let point, _): state.exposurePoint = point
            case .exposureMode(let mode): state.exposureCustom = mode == .custom
            case .customExposure: state.exposureCustom = true
            default: break
            }
            if let feature { state.settling[feature] = plan.afterSettling.isEmpty ? nil : token }
            states[id] = state
        }
        if let feature, !plan.afterSettling.isEmpty, let backend { settle(plan.afterSettling, feature: feature, token: token, device: id, backend: backend) }
        let changesFrames = !plan.writes.isEmpty || plan.cropZoom != nil
        guard changesFrames else { return DeviceChange(device: id, summary: plan.summary) }
        let inSession = plan.cropZoom != nil || backend?.appliesInSession == true
        let waits = streamingTaps(of: id).map { tap -> Promise<FrameStamp> in
            inSession ? tap.change(to: effects(for: device), plan.summary) : tap.arm(plan.summary, stage: .driver)
        }
        return DeviceChange(device: id, summary: plan.summary, waits: waits)
    }

    /// After a one-shot mode's automatic mode ran for `ControlMapping.settleTime`, locks it, unless
    /// another request of the same feature came meanwhile. A Dispatch timer, not a task: the lock comes
    /// on time even while the cooperative pool is busy.
    private func settle(_ writes: [ControlWrite], feature: Feature, token: Int, device: String, backend: any ControlBackend) {
        let delay = Int(ControlMapping.settleTime.seconds * 1000)
        settleQueue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [self] in
            let current = states.withLock { states -> Bool in
                guard states[device]?.settling[feature] == token else { return false }
                states[device]?.settling[feature] = nil
                return true
            }
            guard current else { return }
            for write in writes { try? backend.write(write) }
        }
    }

    private static func feature(of request: ControlRequest) -> Feature? {
        switch request {
        case .focusMode, .lensPosition: .focus
        case .exposureMode, .customExposure: .exposure
        case .whiteBalanceMode, .whiteBalanceTemperature: .whiteBalance
        default: nil
        }
    }

    private func frameSize(of device: CaptureDevice, _ backend: (any ControlBackend)?) -> Size? {
        backend?.frameSize() ?? streamingTaps(of: device.uniqueID).first?.frameSize
    }

    private static func write(_ write: ControlWrite, to backend: any ControlBackend, device: String) throws(CaptureError) {
        do {
            try backend.write(write)
        } catch {
            if error.code == ERANGE, case .integer(let value) = write.value {
                throw .controlOutOfRange(device: device, control: write.key, value: String(value), range: "the driver refused it (\(error.description))")
            }
            throw failure(error, device: device, control: write.key)
        }
    }

    /// The typed error an errno of a control read or write means.
    static func failure(_ error: V4L2Errno, device: String, control: String) -> CaptureError {
        let reason: String
        if error.meansGone {
            reason = "the device was disconnected (\(error.description))"
        } else {
            switch error.code {
            case EACCES, EPERM:
                reason = "the driver refused it: the control is read-only or inactive now, or the node cannot be opened for writing (\(error.description))"
            case EBUSY: reason = "the control is busy: another handle holds it (\(error.description))"
            case EINVAL: reason = "the driver refused the value (\(error.description))"
            default: reason = error.description
            }
        }
        return .controlFailed(device: device, control: control, reason: reason)
    }

    // MARK: Flash for photos

    /// Fires the device's flash for a photo (no lock needed: the photo output drives it); returns the
    /// LED mode to restore.
    func fireFlash(_ device: CaptureDevice) throws(CaptureError) -> Int64 {
        let previous = (try? controls(of: device))?.first { $0.id == V4L2Control.flashLEDMode }?.value ?? V4L2Control.ledNone
        _ = try apply(.flashFire, to: device, requireLock: false)
        return previous
    }

    /// After the photo's frame: the strobe stops and the LED goes back to what it was.
    func releaseFlash(_ device: CaptureDevice, ledMode: Int64) {
        _ = try? apply(.flashRelease(ledMode: ledMode), to: device, requireLock: false)
    }

    // MARK: Running source segments

    /// A source segment of a device started streaming: it takes the device's current effects.
    func attach(_ tap: SourceTap, device: CaptureDevice) {
        tap.apply(effects(for: device))
        taps.withLock { $0[tap.id] = tap }
    }

    func detach(_ id: Int) {
        let tap = taps.withLock { $0.removeValue(forKey: id) }
        tap?.close()
    }

    /// The running source segments of a device, oldest first.
    func streamingTaps(of device: String) -> [SourceTap] {
        taps.withLock { taps in taps.values.filter { $0.device == device }.sorted { $0.id < $1.id } }
    }

    /// What a device's source segments do to its frames: the test pattern's simulated controls, else
    /// the crop zoom the process keeps.
    func effects(for device: CaptureDevice) -> SourceEffects {
        if let simulated = backend(for: device) as? TestPatternControls { return simulated.effects }
        var effects = SourceEffects()
        effects.zoom = states.withLock { $0[device.uniqueID]?.cropZoom } ?? 1
        return effects
    }
}
