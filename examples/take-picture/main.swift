// Recipe 9-1: Taking pictures.
//
// Like UIImagePickerController: make sure a camera is available (tell the user when it is not),
// take one picture and save it. With allowsEditing, the picker's editing step crops the picture (the
// centre square here) and the edited image goes to the saved photos album
// (UIImageWriteToSavedPhotosAlbum: MediaLibrary, the user's Pictures folder). On a machine without a
// camera, pass --allow-test-pattern to use the built-in test pattern instead.
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
    // The editing step: the centre square, as UIImagePickerControllerEditedImage with its CropRect.
    let side = Double(picture.height) / Double(picture.width)
    let edit = try await ImageEditor.edit(imageAt: picture.location ?? path, crop: NormalizedRect(x: (1 - side) / 2, y: 0, width: side, height: 1))
    let saved = try await MediaLibrary.user().save(photoData: edit.editedImage)
    print(
        "Edited \(edit.width)x\(edit.height) (crop \(edit.cropRect.width)x\(edit.cropRect.height) at \(edit.cropRect.x),\(edit.cropRect.y)), saved to the album: \(saved.path)"
    )
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
await session.stopRunning()
