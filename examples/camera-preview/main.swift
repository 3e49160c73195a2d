// Recipe 9-5: Displaying a camera preview with a capture session.
//
// Creates a session, adds the default camera (the test pattern on a machine without one), adds a
// preview (a window when a display exists; headless otherwise), runs for a few seconds and stops.
// Usage: camera-preview [SECONDS] [INPUT]
import Capture
import Foundation

let arguments = CommandLine.arguments.dropFirst()
let seconds = arguments.first.flatMap(Double.init) ?? 3
let inputSpec = arguments.dropFirst().first ?? "default"

let session = CaptureSession()
// Optional, as in the recipe: session.setSessionPreset(.medium)
do {
    let device = try CaptureDevice.resolve(inputSpec)
    let videoInput = try CaptureDeviceInput(device: device)
    try session.addInput(videoInput)
} catch {
    print("Input Error: \(error)")
    exit(1)
}

let preview = CaptureVideoPreviewOutput()  // like AVCaptureVideoPreviewLayer(session:)
let frames = CaptureVideoDataOutput()  // counts what the preview shows
try session.addOutput(preview)
try session.addOutput(frames)

// viewWillAppear: start; viewWillDisappear: stop.
do {
    try await session.startRunning()
} catch {
    print("Could not start the camera: \(error)")
    exit(1)
}
print(preview.showsWindow ? "previewing in a window for \(seconds) s" : "no display: previewing headless for \(seconds) s")
try await Task.sleep(for: .seconds(seconds))
await session.stopRunning()
print("preview showed \(frames.deliveredFrameCount) frames at \(session.sessionPreset.rawValue) quality")
