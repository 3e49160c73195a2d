// Recipe 9-8: capturing video frames.
//
// Record a short video, then, when the recording finished successfully, make a thumbnail of it from
// half its duration (AVAssetImageGenerator with exact timing and the track's rotation applied) and
// save the movie to the album, telling the user whether that worked.
// Without a camera the recipe has nothing to record: pass --allow-test-pattern to record the test
// pattern instead.
// Usage: video-thumbnail [SECONDS] [--allow-test-pattern]
import Capture
import Foundation

let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 2
guard let camera = CaptureDevice.default(for: .video) ?? (CommandLine.arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
    print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
    exit(1)
}

let session = CaptureSession()
let movie = CaptureMovieFileOutput()
do {
    try session.addInput(CaptureDeviceInput(device: camera))
    try session.setSessionPreset(.vga640x480)
    try session.addOutput(movie)
    try await session.startRunning()
    try await movie.startRecording(to: "movie.mp4")
    try await Task.sleep(for: .seconds(seconds))
    let result = try await movie.stopRecording()
    await session.stopRunning()
    guard result.success else {
        print("A problem occurred while recording: \(result.error?.description ?? "unknown")")
        exit(1)
    }
    // createThumbnailForVideoURL: the image at half the duration, exact.
    var generator = AssetImageGenerator(videoAt: result.location)
    generator.appliesPreferredTrackTransform = true
    generator.tolerance = .exact
    let thumbnail = try await generator.saveImage(at: .fraction(0.5), to: "thumbnail.jpg")
    print(
        "Thumbnail \(thumbnail.location ?? "-"): \(thumbnail.width)x\(thumbnail.height) at \(String(format: "%.3f", thumbnail.actualTime)) s of \(String(format: "%.3f", result.duration.seconds)) s"
    )
    do {
        let saved = try await MediaLibrary.user().save(videoAt: result.location)
        print("Video Saved: the movie was successfully saved to your photos library (\(saved.path))")
    } catch {
        print("Error Saving Video: the movie was not saved to your photos library: \(error)")
    }
} catch {
    print("Error: \(error)")
    await session.stopRunning()
    exit(1)
}
