// Recipe 9-3: editing videos.
//
// Record a video (the camera, with the microphone or else the test tone), then trim the last recording
// twice, as the recipe's video editor does: each edited copy becomes the next video to edit
// (pathToRecordedVideo = editedVideoPath) and is saved to the album when the album takes it. With
// --no-recording nothing is recorded and the editor says so, as the recipe's alert does.
// Cuts are frame-exact, as the recipe's editor cuts; --fast copies from keyframes instead.
// Without a camera, pass --allow-test-pattern to record the test pattern.
// Usage: edit-video [--no-recording] [--fast] [--allow-test-pattern]
import Capture
import Foundation

let arguments = CommandLine.arguments.dropFirst()
let library = MediaLibrary.user()
let mode: VideoEditor.TrimMode = arguments.contains("--fast") ? .keyframe : .exact
var pathToRecordedVideo: String?

if !arguments.contains("--no-recording") {
    let session = CaptureSession()
    let movie = CaptureMovieFileOutput()
    do {
        guard let camera = CaptureDevice.default(for: .video) ?? (arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
            print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
            exit(1)
        }
        try session.addInput(CaptureDeviceInput(device: camera))
        try session.addInput(CaptureDeviceInput(device: CaptureDevice.default(for: .audio) ?? .testTone))
        try session.setSessionPreset(.hd1280x720)
        try session.addOutput(movie)
        try await session.startRunning()
        try await movie.startRecording(to: "recorded.mp4")
        try await Task.sleep(for: .seconds(4))
        let result = try await movie.stopRecording()
        await session.stopRunning()
        if result.success { pathToRecordedVideo = result.location }
        print("Recorded \(result.location), \(String(format: "%.1f", result.duration.seconds)) s")
    } catch {
        print("Error: \(error)")
        await session.stopRunning()
        exit(1)
    }
}

/// The recipe's editVideo action: trim the last video, keep the copy as the next one to edit.
@MainActor func editVideo(from start: Double, to end: Double) async -> Bool {
    guard let source = pathToRecordedVideo else {
        print("Error: No Video Recorded Yet")
        return false
    }
    do {
        let edited = try await VideoEditor.trim(videoAt: source, from: start, to: end, saveTo: "edited.mp4", mode: mode)
        print("Edited \(edited.location): \(String(format: "%.2f", edited.duration)) s (\(mode.rawValue))")
        pathToRecordedVideo = edited.location
        if library.isCompatible(videoAt: edited.location) {
            let saved = try await library.save(videoAt: edited.location)
            print("Saved to the album: \(saved.path)")
        }
        return true
    } catch {
        print("Error: \(error)")
        return false
    }
}

let first = await editVideo(from: 1, to: 3)
let second = await editVideo(from: 0.5, to: 1.5)
exit(first && second ? 0 : 1)
