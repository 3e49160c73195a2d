// Seed 003: using the camera and the photo library.
//
// The picker's two sources, as the guide walks through them: the camera (isSourceTypeAvailable
// first; a picture with the editing step - the centre square - and a short video, each saved to the
// saved photos album) and the photo library (an item picked from the album: the newest photo, the
// newest video - a thumbnail from its middle and a trimmed copy, as the picker's video editor does -
// and an item by its name). The album is the user's Pictures and Videos folders (CAPTURE_PICTURES_DIR
// and CAPTURE_VIDEOS_DIR override them). Pipelines/library-flow.pipeline is the same story as a
// .pipeline file.
// Usage: photo-library [camera] [library] [--allow-test-pattern]     (both sources by default)
import Capture
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let sources = arguments.filter { !$0.hasPrefix("--") }
let library = MediaLibrary.user()

/// The camera source: a picture (edited: the centre square) and a 2 s video, both saved to the album.
func useCamera() async -> Int32 {
    // isSourceTypeAvailable(.camera): without a camera there is nothing to show.
    guard let camera = CaptureDevice.default(for: .video) ?? (arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
        print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
        return 1
    }
    let session = CaptureSession()
    let photoOutput = CapturePhotoOutput()
    let movieOutput = CaptureMovieFileOutput()
    do {
        try session.addInput(CaptureDeviceInput(device: camera))
        try session.setSessionPreset(.vga640x480)
        try session.addOutput(photoOutput)
        try session.addOutput(movieOutput)
        try await session.startRunning()
        // allowsEditing: the picture as taken is kept in the current folder; the edited image goes to the album.
        let picture = try await photoOutput.capturePhoto(with: PhotoSettings(location: "photo-library-picture.jpg"))
        let side = Double(picture.height) / Double(picture.width)
        let edited = try await ImageEditor.edit(
            imageAt: picture.location ?? "photo-library-picture.jpg", crop: NormalizedRect(x: (1 - side) / 2, y: 0, width: side, height: 1))
        let savedPhoto = try await library.save(photoData: edited.editedImage)
        print("Camera: took a \(picture.width)x\(picture.height) picture, saved the \(edited.width)x\(edited.height) edit to \(savedPhoto.path)")
        // The movie source of the same picker: a short recording, saved when the album takes it.
        let recording = FileNaming.nextFree("photo-library-clip.mp4")
        _ = try await movieOutput.startRecording(to: recording)
        try await Task.sleep(for: .seconds(2))
        let result = try await movieOutput.stopRecording()
        await session.stopRunning()
        guard result.success, library.isCompatible(videoAt: result.location) else {
            print("Camera: the recording could not be saved (\(result.error?.description ?? "the album does not take it"))")
            return 1
        }
        let savedVideo = try await library.save(videoAt: result.location)
        print("Camera: recorded \(String(format: "%.1f", result.duration.seconds)) s, saved to \(savedVideo.path)")
        return 0
    } catch {
        await session.stopRunning()
        print("Error: \(error)")
        return 1
    }
}

/// The photo-library source: what the user picks from the album, and what the app does with it.
func usePhotoLibrary() async -> Int32 {
    do {
        let photo = try library.pick(.photo)
        print("Library: picked the photo \(photo.path): \(photo.width ?? 0)x\(photo.height ?? 0)")
        let video = try library.pick(.video)
        print("Library: picked the video \(video.path): \(String(format: "%.1f", video.duration ?? 0)) s")
        // The picked video, as the recipe's editor and thumbnail read a recorded one.
        let thumbnail = try await AssetImageGenerator(videoAt: video.path).saveImage(at: .middle, to: "picked-thumbnail.jpg")
        print("Library: thumbnail \(thumbnail.location ?? "-") \(thumbnail.width)x\(thumbnail.height)")
        let trimmed = try await VideoEditor.trim(videoAt: video.path, from: 0.5, to: 1.5, saveTo: "picked-trimmed.mp4", mode: .exact)
        print("Library: trimmed \(trimmed.location): \(String(format: "%.2f", trimmed.duration)) s")
        // By its name, as a grid the user tapped gives it.
        let named = try library.pick(named: (video.path as NSString).lastPathComponent)
        print("Library: picked by name \(named.path)")
        return 0
    } catch {
        // An empty album: the picker has nothing to offer.
        print("Library: nothing to pick (\(error))")
        return 1
    }
}

var status: Int32 = 0
if sources.isEmpty || sources.contains("camera") { status = max(status, await useCamera()) }
if status == 0, sources.isEmpty || sources.contains("library") { status = max(status, await usePhotoLibrary()) }
exit(status)
