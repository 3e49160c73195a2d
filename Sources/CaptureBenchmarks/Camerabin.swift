import Capture
import Foundation
import GStreamer

/// A benchmark that could not complete: a peer that did not answer in time, an input it cannot use.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits for bus messages of a peer pipeline, one at a time, each wait bounded in time.
final class MessageSignal: Sendable {
    private struct State {
        var count = 0
        var waiter: (id: Int, continuation: CheckedContinuation<Bool, Never>)?
        var lastID = 0
    }
    private let state = Locked(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if let waiter = state.waiter { state.waiter = nil; return waiter.continuation }
            state.count += 1
            return nil
        }
        waiter?.resume(returning: true)
    }

    /// True when a message came (or had come), false when `timeout` passed first.
    func wait(timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                if state.count > 0 { state.count -= 1; return nil }
                state.lastID += 1
                state.waiter = (state.lastID, continuation)
                return state.lastID
            }
            guard let id else { continuation.resume(returning: true); return }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: false)
            }
        }
    }
}

/// The first error a peer pipeline posted.
final class FirstFailure: Sendable {
    private let state = Locked<String?>(nil)
    func note(_ message: String) { state.withLock { $0 = $0 ?? message } }
    var message: String? { state.withLock { $0 } }
}

/// GStreamer's own camera bin, the peer of the photo and mode-switch benchmarks: `camerabin` with a
/// `wrappercamerabinsrc` around the given video source, built from element factories and property
/// setters only (no launch description: no value ever becomes pipeline text).
final class CamerabinPeer: Sendable {
    /// camerabin's `mode` property.
    enum Mode: String, Sendable {
        case image = "1"
        case video = "2"
    }

    struct Settings: Sendable {
        /// Caps the viewfinder is restricted to (`video/x-raw,width=1280,height=720,framerate=30/1`).
        var viewfinderCaps: String
        var imageCaps: String?
        var videoCaps: String?
        /// camerabin's `video-profile` in GStreamer's serialized encoding-profile form
        /// (`video/quicktime,variant=iso:video/x-h264:audio/mpeg,mpegversion=4`).
        var videoProfile: String?
        var mode: Mode = .image
    }

    let pipeline: Pipeline
    let camerabin: Element
    private let cameraSource: Element
    private let imageDone = MessageSignal()
    private let videoDone = MessageSignal()
    private let failure = FirstFailure()

    init(videoSource: Element, viewfinderSink: Element, audioSource: Element? = nil, settings: Settings) throws(GStreamerError) {
        pipeline = try Pipeline.make(name: "bench-camerabin")
        camerabin = try Element.make("camerabin", name: "camera")
        cameraSource = try Element.make("wrappercamerabinsrc", name: "camera-source")
        try cameraSource.set("video-source", object: videoSource)
        try camerabin.set("camera-source", object: cameraSource)
        try camerabin.set("viewfinder-sink", object: viewfinderSink)
        if let audioSource { try camerabin.set("audio-source", object: audioSource) }
        try camerabin.set("mode", settings.mode.rawValue)
        try camerabin.set("viewfinder-caps", settings.viewfinderCaps)
        if let caps = settings.imageCaps { try camerabin.set("image-capture-caps", caps) }
        if let caps = settings.videoCaps { try camerabin.set("video-capture-caps", caps) }
        if let profile = settings.videoProfile { try camerabin.set("video-profile", profile) }
        try pipeline.add(camerabin)
        let imageDone = imageDone, videoDone = videoDone, failure = failure
        pipeline.bus.setSyncHandler { message in
            switch message.kind {
            case .element:
                switch message.structure?.name {
                case "image-done": imageDone.signal()
                case "video-done": videoDone.signal()
                default: break
                }
            case .error:
                failure.note(message.error?.description ?? "an error from \(message.sourceName)")
                imageDone.signal()
                videoDone.signal()
            default: break
            }
        }
    }

    func start() throws(GStreamerError) { try pipeline.setState(.playing) }

    func stop() {
        _ = try? pipeline.setState(.null)
        let bus = pipeline.bus
        bus.removeSyncHandler()
        bus.setFlushing(true)
    }

    /// Switches between still and video capture on the running bin.
    func setMode(_ mode: Mode) throws {
        try checkFailure()
        try camerabin.set("mode", mode.rawValue)
    }

    /// Takes one still and returns once camerabin posts `image-done` (the file is written).
    func captureImage(to path: String, timeout: Duration = .seconds(10)) async throws {
        try await waitUntilReady(timeout: timeout)
        try camerabin.set("location", path)
        camerabin.emit("start-capture")
        guard await imageDone.wait(timeout: timeout) else { throw BenchmarkError("camerabin posted no image-done within \(timeout)") }
        try checkFailure()
    }

    /// Starts a recording (video mode) to `path`.
    func startRecording(to path: String, timeout: Duration = .seconds(10)) async throws {
        try await waitUntilReady(timeout: timeout)
        try camerabin.set("location", path)
        camerabin.emit("start-capture")
    }

    /// Stops the recording and returns once camerabin posts `video-done` (the file is finished).
    func stopRecording(timeout: Duration = .seconds(10)) async throws {
        camerabin.emit("stop-capture")
        guard await videoDone.wait(timeout: timeout) else { throw BenchmarkError("camerabin posted no video-done within \(timeout)") }
        try checkFailure()
    }

    /// Sets properties on every element of `factory` camerabin made for itself (the encoder its
    /// encodebin picked); returns how many it found.
    @discardableResult
    func tune(_ factory: String, _ properties: [(String, String)]) throws -> Int {
        guard let bin = Element.borrow(camerabin.element) as? Bin else { return 0 }
        let found = bin.elements(madeBy: factory)
        for element in found {
            for (key, value) in properties { try element.set(key, value) }
        }
        return found.count
    }

    /// camerabin ignores a capture request while it is busy or its source is not ready (right after a
    /// mode change): waits for both, without sleeping when they are ready already.
    private func waitUntilReady(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while camerabin.int("idle") != 1 || cameraSource.int("ready-for-capture") != 1 {
            try checkFailure()
            guard ContinuousClock.now < deadline else { throw BenchmarkError("camerabin was not ready for a capture within \(timeout)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    private func checkFailure() throws {
        if let message = failure.message { throw BenchmarkError("camerabin failed: \(message)") }
    }
}

extension Element {
    /// Makes an element from a compiled element spec (factory and properties), with property setters.
    static func make(_ spec: ElementSpec, name: String) throws(GStreamerError) -> Element {
        let element = try Element.make(spec.factory, name: name)
        for property in spec.properties + spec.liveProperties { try element.set(property.name, property.value) }
        return element
    }
}
