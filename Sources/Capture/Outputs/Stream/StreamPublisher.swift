import CStreamShim
import Foundation
import GStreamer

/// Sends a stream output's encoded samples to a server in a pipeline of its own, apart from the
/// session's: `appsrc ! rtspclientsink` (RTSP RECORD) or `appsrc ! mpegtsmux ! srtsink` (SRT). When the
/// server is not there or goes away, that pipeline is torn down and built again after a back-off (1 s,
/// doubling up to 30 s), each time reported as `stream-disconnected`; the session's pipeline, the camera
/// and a recording never see it. The samples keep their timestamps' spacing, moved onto that
/// pipeline's clock. Its appsrc never blocks: when the network cannot keep up, the oldest
/// data goes.
final class StreamPublisher: Sendable {
    /// The longest wait between two attempts.
    static let maximumBackoff: Double = 30

    private struct Attempt: @unchecked Sendable {
        // @unchecked: GStreamer objects are thread-safe to reference and to push into (appsrc); the
        // struct is only read and replaced under `state`'s lock.
        let pipeline: Pipeline
        let video: Element
        let audio: Element?
        let generation: Int
    }

    private struct State: Sendable {
        var attempt: Attempt?
        var generation = 0
        var stopped = false
        var connected = false
        /// The next wait after a failure.
        var backoff: Double = 1
        /// Nothing has been sent by this attempt yet: the first video buffer must be a key frame.
        var needsKeyFrame = true
        /// Session running time -> the attempt's pipeline's, in nanoseconds (`Int.min`, gint64 on 64-bit Linux: not known yet).
        var offset = AppSourceRetiming.unset
    }

    let url: StreamURL
    let output: String
    let audio: MovieAudioCodec?
    private let post: @Sendable (SessionEvent.Kind) -> Void
    private let state = Locked(State())
    private let queue: DispatchQueue

    init(url: StreamURL, output: String, audio: MovieAudioCodec?, post: @escaping @Sendable (SessionEvent.Kind) -> Void) {
        self.url = url
        self.output = output
        self.audio = audio
        self.post = post
        queue = DispatchQueue(label: "capture.stream-publisher.\(output)")
    }

    /// The elements of the publishing pipeline, by factory, after the appsrc(s).
    static func sinkFactories(for url: StreamURL) -> [String] {
        url.scheme == .rtsp ? ["rtspclientsink"] : ["mpegtsmux", "srtsink"]
    }

    /// The publishing pipeline in gst-launch terms (what `capture compile` prints; not runnable alone).
    static func launchDescription(for url: StreamURL, audio: MovieAudioCodec?) -> String {
        let source = "appsrc name=videosrc is-live=true format=time leaky-type=downstream"
        let audioSource = "appsrc name=audiosrc is-live=true format=time leaky-type=downstream"
        switch url.scheme {
        case .rtsp:
            var text = "rtspclientsink name=publish location=\(url.description) protocols=tcp latency=0  \(source) ! publish."
            if audio != nil { text += "  \(audioSource) ! publish." }
            return text
        case .srt:
            let mode = url.srtMode == .listener ? " wait-for-connection=false" : ""
            var text = "\(source) ! mpegtsmux name=mux alignment=7 ! srtsink uri=\(url.description) auto-reconnect=false\(mode)"
            if audio != nil { text += "  \(audioSource) ! mux." }
            return text
        }
    }

    var isConnected: Bool { state.withLock { $0.connected } }

    func start() {
        queue.async { self.connect() }
    }

    /// Stops the current attempt and any attempt to come.
    func stop() {
        let attempt = state.withLock { state -> Attempt? in
            state.stopped = true
            state.connected = false
            defer { state.attempt = nil }
            return state.attempt
        }
        queue.sync { Self.tearDown(attempt) }
    }

    /// Hands an encoded sample to the server; true when the publisher waits for a key frame (a new
    /// connection starts with one). Called on the session's streaming thread: never blocks.
    func push(_ sample: SampleView, audio isAudio: Bool) -> Bool {
        state.withLock { state in
            guard let attempt = state.attempt else { return false }
            if isAudio {
                guard let audio = attempt.audio, !state.needsKeyFrame else { return false }
                audio.pushSample(sample, retiming: &state.offset)
                return false
            }
            if state.needsKeyFrame {
                guard sample.isKeyFrame else { return true }
                state.needsKeyFrame = false
            }
            attempt.video.pushSample(sample, retiming: &state.offset)
            return false
        }
    }

    // MARK: Attempts (on `queue`)

    private func connect() {
        let generation: Int? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let attempt: Attempt
        do {
            attempt = try build(generation: generation)
        } catch {
            failed(generation: generation, reason: error.description)
            return
        }
        let accepted = state.withLock { state -> Bool in
            guard !state.stopped, state.generation == generation else { return false }
            state.attempt = attempt
            state.needsKeyFrame = true
            state.offset = .unset
            return true
        }
        guard accepted else { Self.tearDown(attempt); return }
        do {
            _ = try attempt.pipeline.setState(.playing)
        } catch {
            failed(generation: generation, reason: error.description)
            return
        }
        if url.listens {
            post(.streamReady(output: output, url: url.description))
        }
    }

    private func build(generation: Int) throws(GStreamerError) -> Attempt {
        let pipeline = try Pipeline.make(name: "\(output)_publish")
        pipeline.useSystemClock()
        let video = try Self.appSource("videosrc")
        try pipeline.add(video)
        var audioSource: Element?
        switch url.scheme {
        case .rtsp:
            let sink = try Element.make("rtspclientsink", name: "publish")
            try sink.set("location", url.gstreamerURI)
            try sink.set("protocols", "tcp")
            try sink.set("latency", "0")
            if let user = url.user { try sink.set("user-id", user) }
            if let password = url.password { try sink.set("user-pw", password) }
            try pipeline.add(sink)
            try video.staticPad("src").map { pad throws(GStreamerError) in try pad.link(to: try sink.requestPad("sink_%u")) }
            if audio != nil {
                let source = try Self.appSource("audiosrc")
                try pipeline.add(source)
                try source.staticPad("src").map { pad throws(GStreamerError) in try pad.link(to: try sink.requestPad("sink_%u")) }
                audioSource = source
            }
        case .srt:
            let mux = try Element.make("mpegtsmux", name: "mux")
            try mux.set("alignment", "7")
            let sink = try Element.make("srtsink", name: "publish")
            try sink.set("uri", url.gstreamerURI)
            try sink.set("auto-reconnect", "false")
            try sink.set("sync", "false")
            if url.listens {
                try sink.set("wait-for-connection", "false")
                let box = Unmanaged.passRetained(
                    PeerBox { [weak self] connected, address in
                        self?.peer(connected: connected, address: address, generation: generation)
                    }
                ).toOpaque()
                capture_srt_watch_callers(sink.element, peerTrampoline, box, peerBoxRelease)
            } else {
                // The caller is connected once srtsink has sent a buffer: the second one reaches its pad
                // only after the first was written.
                let seen = Locked(0)
                sink.staticPad("sink")?.addProbe([.buffer, .bufferList]) { [weak self] _, _ in
                    let count = seen.withLock { count in
                        count += 1
                        return count
                    }
                    if count == 2 { self?.connected(generation: generation) }
                    return .ok
                }
            }
            try pipeline.add(mux)
            try pipeline.add(sink)
            try video.link(to: mux)
            try mux.link(to: sink)
            if audio != nil {
                let source = try Self.appSource("audiosrc")
                try pipeline.add(source)
                try source.link(to: mux)
                audioSource = source
            }
        }
        pipeline.bus.setSyncHandler { [weak self] message in
            self?.handle(message, generation: generation)
        }
        return Attempt(pipeline: pipeline, video: video, audio: audioSource, generation: generation)
    }

    private static func appSource(_ name: String) throws(GStreamerError) -> Element {
        let source = try Element.make("appsrc", name: name)
        try source.set("is-live", "true")
        try source.set("format", "time")
        try source.set("block", "false")
        try source.set("max-bytes", "\(4 << 20)")
        try source.set("leaky-type", "downstream")
        return source
    }

    /// Runs on the posting thread (the bus's sync handler): reads and hands work to the queue.
    private func handle(_ message: Message, generation: Int) {
        switch message.kind {
        case .error:
            let reason = message.error?.message ?? "the connection failed"
            queue.async { self.failed(generation: generation, reason: reason) }
        case .warning:
            // srtsink warns (and would try by itself) when its socket fails; the attempt is rebuilt instead.
            if message.sourceName == "publish" {
                let reason = message.error?.message ?? "the connection failed"
                queue.async { self.failed(generation: generation, reason: reason) }
            }
        case .eos:
            queue.async { self.failed(generation: generation, reason: "the server ended the stream") }
        default:
            // rtspclientsink reports each step of its RTSP exchange as a progress message; "record"
            // "Starting recording" follows the server's answer to RECORD.
            if let structure = message.structure, structure.name == "GstMessageProgress",
                structure.string("code") == "record", structure.string("text") == "Starting recording"
            {
                connected(generation: generation)
            }
        }
    }

    private func connected(generation: Int) {
        let isNew = state.withLock { state -> Bool in
            guard state.generation == generation, !state.stopped, !state.connected else { return false }
            state.connected = true
            state.backoff = 1
            return true
        }
        if isNew { post(.streamConnected(output: output, url: url.description)) }
    }

    private func peer(connected: Bool, address: String, generation: Int) {
        guard state.withLock({ $0.generation == generation && !$0.stopped }) else { return }
        post(
            connected
                ? .streamClientConnected(output: output, url: url.description, client: address)
                : .streamClientDisconnected(output: output, url: url.description, client: address))
    }

    /// The attempt `generation` failed: tear it down, say so, and try again after the back-off.
    private func failed(generation: Int, reason: String) {
        let outcome = state.withLock { state -> (Attempt?, Double)? in
            guard state.generation == generation, !state.stopped else { return nil }
            let attempt = state.attempt
            state.attempt = nil
            state.connected = false
            let wait = state.backoff
            state.backoff = min(Self.maximumBackoff, state.backoff * 2)
            state.generation += 1  // later messages of this attempt are ignored
            return (attempt, wait)
        }
        guard let (attempt, wait) = outcome else { return }
        Self.tearDown(attempt)
        post(.streamDisconnected(output: output, url: url.description, reason: reason, retryIn: wait))
        queue.asyncAfter(deadline: .now() + wait) { self.connect() }
    }

    private static func tearDown(_ attempt: Attempt?) {
        guard let attempt else { return }
        attempt.pipeline.bus.setFlushing(true)
        attempt.pipeline.bus.removeSyncHandler()
        _ = try? attempt.pipeline.setState(.null)
    }
}
