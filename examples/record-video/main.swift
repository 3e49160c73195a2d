// Recipe 9-2: recording video.
//
// A session with the camera and a microphone (the test tone on a machine without one), a movie
// output and a recording delegate that reports the finished file, as the recipe's
// didFinishRecordingToOutputFileAtURL callback does.
// A finished movie goes to the saved photos album when the album takes it
// (UIVideoAtPathIsCompatibleWithSavedPhotosAlbum, UISaveVideoAtPathToSavedPhotosAlbum: MediaLibrary,
// the user's Videos folder).
// Without a camera, pass --allow-test-pattern to record the test pattern.
// Usage: record-video [SECONDS] [PATH] [--allow-test-pattern]
import Capture
import Foundation

final class RecordingReporter: CaptureFileOutputRecordingDelegate {
    func fileOutput(_ output: CaptureMovieFileOutput, didStartRecordingTo fileURL: URL, firstTimestamp: Double) {
        print("Recording to \(fileURL.path)")
    }
    func fileOutput(_ output: CaptureMovieFileOutput, didFinishRecordingTo fileURL: URL, result: MovieRecordingResult) {
        if result.success {
            print("Video saved: \(fileURL.path), \(result.duration), \(result.fileSize) bytes")
        } else {
            print("Recording failed: \(result.error?.description ?? "unknown error")")
        }
    }
}

let arguments = CommandLine.arguments.dropFirst().filter { $0 != "--allow-test-pattern" }
guard let camera = CaptureDevice.default(for: .video) ?? (CommandLine.arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
    print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
    exit(1)
}
let seconds = arguments.first.flatMap(Double.init) ?? 3
let path = arguments.dropFirst().first ?? "video_%03d.mp4"

let session = CaptureSession()
let movieOutput = CaptureMovieFileOutput()
let reporter = RecordingReporter()
do {
    try session.addInput(CaptureDeviceInput(device: camera))
    let microphone = CaptureDevice.default(for: .audio) ?? .testTone
    try session.addInput(CaptureDeviceInput(device: microphone))
    try session.setSessionPreset(.hd1280x720)
    try session.addOutput(CaptureVideoPreviewOutput())
    try session.addOutput(movieOutput)
    try await session.startRunning()
    try await movieOutput.startRecording(to: path, delegate: reporter)
    try await Task.sleep(for: .seconds(seconds))
    let result = try await movieOutput.stopRecording()
    await session.stopRunning()
    let library = MediaLibrary.user()
    if result.success, library.isCompatible(videoAt: result.location) {
        let saved = try await library.save(videoAt: result.location)
        print("Saved to the album: \(saved.path)")
    }
    exit(result.success ? 0 : 1)
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
