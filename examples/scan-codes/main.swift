// Recipe 9-9: capturing machine-readable codes.
//
// A metadata output reading UPC-E and QR codes; each code is printed with its type and value when it
// comes into view, as the recipe's captureOutput:didOutputMetadataObjects: does.
// Usage: scan-codes [INPUT] [SECONDS]     (INPUT: a camera, or file:VIDEO; default: the first camera)
import Capture
import Foundation

final class CodePrinter: CaptureMetadataOutputObjectsDelegate {
    func metadataOutput(_ output: CaptureMetadataOutput, didOutput objects: [MetadataMachineReadableCodeObject]) {
        for code in objects {
            print("\(code.type.rawValue): \(code.stringValue)")
        }
    }
}

let arguments = CommandLine.arguments.dropFirst()
let inputSpec = arguments.first ?? "default"
let seconds = arguments.dropFirst().first.flatMap(Double.init) ?? 5

let session = CaptureSession()
let metadataOutput = CaptureMetadataOutput()
let printer = CodePrinter()
do {
    let device = try CaptureDevice.resolve(inputSpec)
    try session.addInput(CaptureDeviceInput(device: device))
    try session.addOutput(CaptureVideoPreviewOutput())
    try session.addOutput(metadataOutput)
    // Only after the output is in the session are the available types known, as in AVFoundation.
    try metadataOutput.setMetadataObjectTypes([.upcE, .qr])
    metadataOutput.setMetadataObjectsDelegate(printer)
    try await session.startRunning()
} catch {
    print("Error: \(error)")
    exit(1)
}
// Scan until the time is up or the input ends (a video file).
let events = session.events()
let deadline = Task {
    try? await Task.sleep(for: .seconds(seconds)); await session.stopRunning()
}
for await event in events where event.name == "session-stopped" { break }
deadline.cancel()
await session.stopRunning()
