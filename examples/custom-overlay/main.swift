// Recipe 9-4: Using custom camera overlays.
//
// The camera app draws its own controls over the camera view instead of the stock ones: a flash
// button, a front/rear camera button and a shutter ("Click!"), half-transparent grey with white
// titles. On Linux an overlay is drawn into the video, so these go on the preview only: the pictures
// have none of them. Tapping a button is a call here; each tap updates its button's title, on the
// running session, with nothing restarted.
//
// It saves what the viewfinder shows (viewfinder.png, the buttons included) and the picture taken.
// Usage: custom-overlay [--allow-test-pattern] [PICTURE]
import Capture
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let path = arguments.first { !$0.hasPrefix("--") } ?? "picture.jpg"

// Make sure a camera is available.
let camera: CaptureDevice
if let found = CaptureDevice.default(for: .video) {
    camera = found
} else if arguments.contains("--allow-test-pattern") {
    print("No camera on this machine: using the test pattern.")
    camera = .testPattern
} else {
    print("Error: Camera Unavailable")
    exit(1)
}

/// A button of the overlay: a white title on a half-transparent grey box.
func button(_ name: String, _ title: String, at position: CaptureOverlay.Position, size: Double = 0.05) -> CaptureOverlay {
    CaptureOverlay(
        name: name, content: .text(title, style: .init(size: size, color: .white, background: OverlayColor(red: 0.5, green: 0.5, blue: 0.5, alpha: 0.5))),
        position: position)
}

/// Changes a button's title, as `setTitle:forState:` does.
func setTitle(_ title: String, of name: String, on preview: CaptureVideoPreviewOutput) throws(CaptureError) {
    try preview.updateOverlay(named: name) { overlay in
        if case .text(_, let style) = overlay.content { overlay.content = .text(title, style: style) }
    }
}

let session = CaptureSession()
// The camera view: a window when there is a display, else the frames are kept for snapshots.
let preview = CaptureVideoPreviewOutput(name: "preview")
let photoOutput = CapturePhotoOutput(name: "photo")
var flashMode = FlashMode.off
do {
    try session.addInput(CaptureDeviceInput(device: camera, name: "camera"))
    try session.setSessionPreset(.vga640x480)
    try session.addOutput(preview)
    try session.addOutput(photoOutput)
    // customViewForImagePicker: the three buttons.
    try preview.addOverlay(button("flash", "Flash Off", at: .topLeft))
    try preview.addOverlay(button("camera", "Rear Camera", at: .topRight))
    try preview.addOverlay(button("shutter", "Click!", at: .bottom, size: 0.07))
    try await session.startRunning()
    try await Task.sleep(for: .milliseconds(500))

    // toggleFlash: off <-> on where the camera has a flash; auto otherwise (the flash fires when needed).
    flashMode = photoOutput.supportedFlashModes.contains(.on) ? .on : .auto
    try setTitle("Flash \(flashMode.rawValue.capitalized)", of: "flash", on: preview)
    print("Flash button: Flash \(flashMode.rawValue.capitalized)")

    // toggleCamera: the front camera when there is one; the rear one stays otherwise.
    if CaptureDevice.default(for: .video, position: .front) != nil {
        try await session.switchCamera(to: .front)
        try setTitle("Front Camera", of: "camera", on: preview)
        print("Camera button: Front Camera")
    } else {
        print("Camera button: no front camera, the rear one stays")
    }
    try await Task.sleep(for: .milliseconds(300))

    // What the user sees now.
    let viewfinder = try preview.snapshot(codec: .png)
    // Never over a file that is already there.
    try Data(viewfinder).write(to: URL(fileURLWithPath: "viewfinder.png"), options: .withoutOverwriting)
    print("Saved the viewfinder with its buttons to viewfinder.png")

    // The shutter button: takePicture.
    let picture = try await photoOutput.capturePhoto(with: PhotoSettings(flashMode: flashMode, location: path))
    print("Took a \(picture.width)x\(picture.height) picture with \(camera.localizedName), saved to \(picture.location ?? path) (no buttons on it)")
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
await session.stopRunning()
