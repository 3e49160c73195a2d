// The camera-roll app (seed 002): a "Camera" button takes a new photo and saves it to the camera
// roll, reporting a failed save clearly ("Save failed"); a "Camera Roll" button picks the newest
// photo already in the library (the picker's photo-library source) instead, and does not save it again.
// Usage: camera-roll-app camera|roll [--allow-test-pattern]
import Capture
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let library = MediaLibrary.user()

func useCamera() async -> Int32 {
    guard let camera = CaptureDevice.default(for: .video) ?? (arguments.contains("--allow-test-pattern") ? .testPattern : nil),
        camera.availableMediaTypes.contains(.photo)
    else {
        print("Error: Camera Unavailable")
        return 1
    }
    let session = CaptureSession()
    let photoOutput = CapturePhotoOutput()
    defer { Task { await session.stopRunning() } }
    do {
        try session.addInput(CaptureDeviceInput(device: camera))
        try session.setSessionPreset(.hd1280x720)
        try session.addOutput(photoOutput)
        try await session.startRunning()
        let photo = try await photoOutput.capturePhoto()
        print("Showing the new \(photo.width)x\(photo.height) photo from \(camera.localizedName)")
        // newMedia: the photo is new, so it goes to the camera roll (image:finishedSavingWithError:).
        do {
            let saved = try await library.save(photo: photo)
            print("Saved to the camera roll: \(saved.path)")
            return 0
        } catch {
            print("Save failed: Failed to save image (\(error))")
            return 1
        }
    } catch {
        print("Error: \(error)")
        return 1
    }
}

func useCameraRoll() -> Int32 {
    guard library.isAvailable(.photo), let newest = library.newest(.photo) else {
        print("The camera roll is empty (\(library.picturesFolder))")
        return 1
    }
    // Picked from the library: shown, not saved again.
    print("Picked \(newest.path): \(newest.width ?? 0)x\(newest.height ?? 0), \(newest.size) bytes")
    return 0
}

switch arguments.first {
case "camera": exit(await useCamera())
case "roll": exit(useCameraRoll())
default:
    print("usage: camera-roll-app camera|roll [--allow-test-pattern]")
    exit(64)
}
