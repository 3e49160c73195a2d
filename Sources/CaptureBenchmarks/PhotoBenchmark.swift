import Capture
import Foundation
import GStreamer

extension Benchmarks {
    /// Shot-to-save and shot-to-shot of the photo output against GStreamer's camerabin on the same
    /// source (live test pattern) and size, and the shutter lag with and without zero-shutter-lag.
    static func photo(shots: Int = 10, size: Size = Size(width: 1280, height: 720)) async throws -> [BenchmarkResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Ours.
        var oursSave: [Double] = []
        var lags: [Double] = []
        var zslLags: [Double] = []
        var oursBurst = 0.0
        for zeroShutterLag in [false, true] {
            let session = CaptureSession(name: "bench-photo")
            try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera"))
            try session.setSessionPreset(.hd1280x720)
            let photo = CapturePhotoOutput(name: "photo")
            photo.defaults.zeroShutterLag = zeroShutterLag
            try session.addOutput(photo)
            try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
            try await session.startRunning()
            try await Task.sleep(for: .milliseconds(300))
            _ = try await photo.capturePhoto()  // warm-up: builds the encoder
            for index in 0..<shots {
                let start = ContinuousClock.now
                let shot = try await photo.capturePhoto(
                    with: PhotoSettings(size: size, location: directory.appendingPathComponent("ours_\(zeroShutterLag)_\(index).jpg").path))
                if !zeroShutterLag { oursSave.append((ContinuousClock.now - start).milliseconds) }
                if zeroShutterLag { zslLags.append(abs(shot.shutterLag) * 1000) } else { lags.append(shot.shutterLag * 1000) }
                try await Task.sleep(for: .milliseconds(Int.random(in: 20...60)))
            }
            if !zeroShutterLag {
                let start = ContinuousClock.now
                for index in 0..<shots {
                    _ = try await photo.capturePhoto(with: PhotoSettings(size: size, location: directory.appendingPathComponent("burst_\(index).jpg").path))
                }
                oursBurst = (ContinuousClock.now - start).milliseconds / Double(shots)
            }
            await session.stopRunning()
        }

        // camerabin, same source and size.
        let source = try Element.make("videotestsrc", name: "peer-source")
        try source.set("is-live", "true")
        let viewfinder = try Element.make("fakesink", name: "peer-viewfinder")
        try viewfinder.set("sync", "true")
        let peer = try CamerabinPeer(
            videoSource: source, viewfinderSink: viewfinder,
            settings: .init(
                viewfinderCaps: "video/x-raw,width=\(size.width),height=\(size.height),framerate=30/1",
                imageCaps: "video/x-raw,width=\(size.width),height=\(size.height)"))
        try peer.start()
        defer { peer.stop() }
        try await Task.sleep(for: .milliseconds(800))
        func shoot(_ name: String) async throws {
            try await peer.captureImage(to: directory.appendingPathComponent(name).path)
        }
        try await shoot("peer_warmup.jpg")
        var peerSave: [Double] = []
        for index in 0..<shots {
            let start = ContinuousClock.now
            try await shoot("peer_\(index).jpg")
            peerSave.append((ContinuousClock.now - start).milliseconds)
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...60)))
        }
        let burstStart = ContinuousClock.now
        for index in 0..<shots { try await shoot("peer_burst_\(index).jpg") }
        let peerBurst = (ContinuousClock.now - burstStart).milliseconds / Double(shots)

        return [
            BenchmarkResult(
                name: "shot-to-save, \(size) JPEG (median of \(shots))", value: median(oursSave), unit: "ms",
                peer: "camerabin", peerValue: median(peerSave), note: "target: at most 0.8x camerabin"),
            BenchmarkResult(
                name: "shot-to-shot, \(size) JPEG, back to back", value: oursBurst, unit: "ms",
                peer: "camerabin", peerValue: peerBurst),
            BenchmarkResult(
                name: "shutter lag (request to frame time), median", value: median(lags), unit: "ms",
                peer: "with zero-shutter-lag (|lag|)", peerValue: median(zslLags)),
        ]
    }
}
