// Recipe 9-1: Taking pictures.
//
// Like UIImagePickerController: make sure a camera is available (tell the user when it is not),
// take one picture and save it. On a machine without a camera, pass --allow-test-pattern to use
// the built-in test pattern instead.
// Usage: take-picture [--allow-test-pattern] [PATH]
import Capture
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let allowTestPattern = arguments.contains("--allow-test-pattern")
let path = arguments.first { !$0.hasPrefix("--") } ?? "picture.jpg"

// Make sure a camera is available (isSourceTypeAvailable(.camera)).
let camera: CaptureDevice
if let found = CaptureDevice.default(for: .video) {
    camera = found
} else if allowTestPattern {
    print("No camera on this machine: using the test pattern.")
    camera = .testPattern
} else {
    print("Error: Camera Unavailable")
    exit(1)
}

let session = CaptureSession()
let photoOutput = CapturePhotoOutput()
do {
    try session.addInput(CaptureDeviceInput(device: camera))
    try session.setSessionPreset(.photo)
    try session.addOutput(photoOutput)
    try await session.startRunning()
    // The user pressed the shutter.
    let picture = try await photoOutput.capturePhoto(with: PhotoSettings(location: path))
    print("Took a \(picture.width)x\(picture.height) picture with \(camera.localizedName), saved to \(picture.location ?? path)")
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
await session.stopRunning()
