// The camera manager: a session with a still-image output, and the camera's own settings the way a
// camera app drives them — white balance and low-light boost set up front, then focus and exposure at
// a point of interest, the torch at a level, a zoom, and a photo with the flash when the camera has one.
//
// Like the iOS camera manager it follows, each setting checks what the device supports, takes the
// device's configuration lock, sets it, and gives the lock back. Unsupported settings are skipped and
// said; the app keeps running.
// Usage: camera-manager [--allow-test-pattern] [PATH]
import Capture
import Foundation

// The back camera of the iOS manager is the first camera here; a machine without one has the test
// pattern, with its simulated brightness, white balance and zoom, when --allow-test-pattern is given.
let options = CommandLine.arguments.dropFirst()
let path = options.last { !$0.hasPrefix("--") } ?? "camera-manager.jpg"
let camera: CaptureDevice
if let found = CaptureDevice.default(for: .video) {
    camera = found
} else if options.contains("--allow-test-pattern") {
    print("No camera on this machine: using the test pattern.")
    camera = .testPattern
} else {
    print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
    exit(1)
}

/// One setting of the manager: checked against what the device supports, made under its lock.
/// Returns false (and says why) when it could not be made.
@discardableResult
func configure(_ what: String, supported: Bool, _ change: (CaptureDevice) throws(CaptureError) -> DeviceChange) async -> Bool {
    guard supported else {
        print("\(what): not supported by \(camera.localizedName)")
        return false
    }
    do {
        try camera.lockForConfiguration(holder: "the camera manager")
        defer { camera.unlockForConfiguration() }
        let made = try change(camera)
        // A running camera says which frame carries the change.
        if let frame = await made.firstFrame() {
            print("\(what): \(made.summary) (from frame \(frame.sequence.map(String.init) ?? "?"), \(frame.framesBefore) frame(s) before it)")
        } else {
            print("\(what): \(made.summary)")
        }
        return true
    } catch {
        print("\(what): \(error)")
        return false
    }
}

let session = CaptureSession(name: "camera-manager")
let photoOutput = CapturePhotoOutput(name: "photo")
do {
    try session.addInput(CaptureDeviceInput(device: camera, name: "camera"))
    try session.setSessionPreset(.hd1280x720)
    try session.addOutput(photoOutput)
    try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
    try await session.startRunning()
} catch {
    print("Error: \(error)")
    exit(1)
}

// Set up front, like the manager's setupCaptureSession: settings the user does not touch.
await configure("white balance", supported: camera.isWhiteBalanceModeSupported(.continuousAutoWhiteBalance)) { device throws(CaptureError) in
    try device.setWhiteBalanceMode(.continuousAutoWhiteBalance)
}
await configure("low light boost", supported: camera.isLowLightBoostSupported) { device throws(CaptureError) in
    try device.setAutomaticallyEnablesLowLightBoostWhenAvailable(true)
}

// The user taps the middle of the preview: focus and expose there.
let tap = NormalizedPoint(x: 0.5, y: 0.5)
if camera.isFocusPointOfInterestSupported {
    await configure("focus point", supported: true) { device throws(CaptureError) in try device.setFocusPointOfInterest(tap) }
}
await configure("focus", supported: camera.isFocusModeSupported(.autoFocus)) { device throws(CaptureError) in try device.setFocusMode(.autoFocus) }
if camera.isExposurePointOfInterestSupported {
    await configure("exposure point", supported: true) { device throws(CaptureError) in try device.setExposurePointOfInterest(tap) }
}
await configure("exposure", supported: camera.isExposureModeSupported(.continuousAutoExposure)) { device throws(CaptureError) in
    try device.setExposureMode(.continuousAutoExposure)
}

// Night shooting: the torch at half power, then off again.
if await configure(
    "torch", supported: camera.hasTorch && camera.isTorchModeSupported(.on), { device throws(CaptureError) in try device.setTorchModeOn(level: 0.5) })
{
    await configure("torch", supported: true) { device throws(CaptureError) in try device.setTorchMode(.off) }
}

// Pinch to zoom: the camera's zoom control, or a crop of the frame when it has none.
await configure("zoom", supported: camera.maxAvailableVideoZoomFactor >= 2) { device throws(CaptureError) in try device.setVideoZoomFactor(2) }

// The shutter: with the flash when the camera has one.
let flash: FlashMode = photoOutput.supportedFlashModes.contains(.on) ? .on : .off
do {
    let picture = try await photoOutput.capturePhoto(with: PhotoSettings(flashMode: flash, location: path))
    print("Took a \(picture.width)x\(picture.height) picture with \(camera.localizedName), flash \(flash.rawValue), saved to \(picture.location ?? path)")
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}

// The front/back toggle: the camera at the other position (or the next camera of the machine) takes
// the input's place while the session runs. Without a second camera, the test pattern's "ball"
// stands in for one when the test pattern is allowed.
do {
    let switched: CaptureDeviceInput
    if CaptureDevice.camera(after: camera) != nil {
        switched = try await session.switchCamera()
    } else if options.contains("--allow-test-pattern") {
        let current = session.inputs[0]
        switched = try CaptureDeviceInput(device: .testPattern, name: current.name, options: InputOptions(pattern: "ball"))
        try await session.replaceInput(current, with: switched)
    } else {
        print("camera switch: no other camera on this machine")
        await session.stopRunning()
        exit(0)
    }
    let picture = try await photoOutput.capturePhoto(with: PhotoSettings(location: "switched-" + (path as NSString).lastPathComponent))
    print(
        "Switched to \(switched.device.localizedName) (\(switched.options.pattern ?? switched.device.uniqueID)) and took a \(picture.width)x\(picture.height) picture"
    )
} catch {
    print("camera switch: \(error)")
}
await session.stopRunning()
