// Recipe 9-7: switching between photo mode and video mode on a running session.
//
// Photo mode: camera + preview + still output. Video mode: the still output leaves and the microphone
// and a movie output join, in one configuration block, while the camera keeps streaming. With no
// microphone on the machine, video mode is refused with a clear error and the session stays in photo
// mode (pass --test-tone to use the virtual microphone instead).
// Without a camera, pass --allow-test-pattern to use the test pattern.
// Usage: video-mode-switch [--test-tone] [--allow-test-pattern]
import Capture
import Foundation

let useTestTone = CommandLine.arguments.contains("--test-tone")
guard let camera = CaptureDevice.default(for: .video) ?? (CommandLine.arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
    print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
    exit(1)
}
let session = CaptureSession()
let photoOutput = CapturePhotoOutput()
photoOutput.defaults.location = "mode_photo_%03d.jpg"
let movieOutput = CaptureMovieFileOutput()

func enterVideoMode() async throws(CaptureError) {
    let microphone = try CaptureDeviceInput(deviceID: useTestTone ? "test-tone" : "default-audio")
    session.beginConfiguration()
    do {
        try session.removeOutput(photoOutput)
        try session.addInput(microphone)
        try session.addOutput(movieOutput)
    } catch {
        try await session.commitConfiguration()
        throw error
    }
    try await session.commitConfiguration()
}

func enterPhotoMode() async throws(CaptureError) {
    session.beginConfiguration()
    try session.removeOutput(movieOutput)
    if let microphone = session.inputs.first(where: { $0.mediaType == .audio }) { try session.removeInput(microphone) }
    try session.addOutput(photoOutput)
    try await session.commitConfiguration()
}

do {
    try session.addInput(CaptureDeviceInput(device: camera))
    try session.setSessionPreset(.hd1280x720)
    try session.addOutput(CaptureVideoPreviewOutput())
    try session.addOutput(photoOutput)
    try await session.startRunning()
    for round in 1...2 {
        let photo = try await photoOutput.capturePhoto()
        print("photo mode: took \(photo.location ?? "-")")
        do {
            try await enterVideoMode()
        } catch {
            print("Cannot switch to video mode: \(error). Staying in photo mode.")
            break
        }
        try await movieOutput.startRecording(to: "mode_video_\(round).mp4")
        try await Task.sleep(for: .seconds(1))
        let movie = try await movieOutput.stopRecording()
        print("video mode: recorded \(movie.location) (\(movie.duration))")
        try await enterPhotoMode()
    }
    await session.stopRunning()
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
