// Recipe 9-6: Capturing still images with a capture session.
//
// A session with a preview and a still-image output; "Capture" takes a JPEG and saves it, reporting
// success or the error, the way the recipe's completion handler does.
// Without a camera, pass --allow-test-pattern to photograph the test pattern.
// Usage: still-image [COUNT] [DIRECTORY] [--allow-test-pattern]
import Capture
import Foundation

/// The recipe's completion handler, as a delegate: it hears every step of each capture.
final class StillImageReporter: CapturePhotoCaptureDelegate, @unchecked Sendable {
    // @unchecked: `finished` is only touched under `lock`.
    private let lock = NSLock()
    private var finished = 0
    /// How many captures the handler has heard the end of.
    var finishedCount: Int { lock.withLock { finished } }

    func photoOutput(_ output: CapturePhotoOutput, willCapturePhotoFor settings: ResolvedPhotoSettings) {
        print("shutter (photo \(settings.uniqueID))")
    }
    func photoOutput(_ output: CapturePhotoOutput, didFinishProcessingPhoto result: Result<Photo, CaptureError>) {
        defer { lock.withLock { finished += 1 } }
        switch result {
        case .success(let photo): print("Image saved: \(photo.location ?? "-") (\(photo.width)x\(photo.height))")
        case .failure(let error): print("Image capture failed: \(error)")
        }
    }
}

let arguments = CommandLine.arguments.dropFirst().filter { $0 != "--allow-test-pattern" }
guard let device = CaptureDevice.default(for: .video) ?? (CommandLine.arguments.contains("--allow-test-pattern") ? .testPattern : nil) else {
    print("Error: Camera Unavailable (no camera on this machine; pass --allow-test-pattern to use the test pattern)")
    exit(1)
}
let count = arguments.first.flatMap(Int.init) ?? 2
let directory = arguments.dropFirst().first ?? "."

let session = CaptureSession()
let stillImageOutput = CapturePhotoOutput()
stillImageOutput.defaults.codec = .jpeg  // AVVideoCodecJPEG
stillImageOutput.defaults.location = "\(directory)/still_%03d.jpg"
let reporter = StillImageReporter()
do {
    try session.addInput(CaptureDeviceInput(device: device))
    try session.setSessionPreset(.hd1280x720)
    try session.addOutput(CaptureVideoPreviewOutput())
    try session.addOutput(stillImageOutput)
    try await session.startRunning()
} catch {
    print("Could not set up the camera: \(error)")
    exit(1)
}
var failed = false
for _ in 0..<count {
    do {
        _ = try await stillImageOutput.capturePhoto(delegate: reporter)
    } catch {
        failed = true  // already reported by the delegate
    }
}
// The handler is called on the output's delegate queue, after capturePhoto returns: let it report the
// last photo before the program ends (bounded).
for _ in 0..<100 where reporter.finishedCount < count { try? await Task.sleep(for: .milliseconds(50)) }
await session.stopRunning()
exit(failed ? 1 : 0)
