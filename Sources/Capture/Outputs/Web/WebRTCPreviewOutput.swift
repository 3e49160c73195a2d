import Dispatch
import Foundation
import GStreamer

/// An offer for one WebRTC viewer: the SDP to hand to the browser, with every ICE candidate in it
/// (gathering finished before it is given out: no trickle ICE needed).
public struct WebRTCOffer: Sendable, Hashable {
    /// The viewer's id in this output.
    public let peer: Int
    /// The SDP offer.
    public let sdp: String
}

/// A live preview for browsers over WebRTC, with one encoder for every viewer: the branch is
/// `queue (leaky, 1 buffer) ! videoconvert ! videoscale ! capsfilter ! overlaycomposition ! vp8enc
/// (realtime) ! rtpvp8pay ! tee`, and each viewer is a `queue (leaky) ! webrtcbin` of its own on that tee,
/// added and removed while the branch runs. So five viewers cost one encode, and a viewer whose network
/// or browser is slow loses packets in its own queue without holding the others (or the camera) up.
///
/// Signalling is the simplest that works over plain HTTP: this output is the offerer, and it waits
/// until ICE gathering is complete before handing out the offer (`addPeer`); the browser answers
/// (`acceptAnswer`).
public final class CaptureWebRTCPreviewOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); settings and peers are behind
    // `Locked`; the GStreamer objects are thread-safe.
    private struct Settings {
        var size: Size?
        var bitRate = 1_000_000
        var maxFrameRate: Double?
    }

    private struct Peer {
        var bin: Bin
        var webrtc: Element
        var teePad: Pad
        var answered = false
    }

    private let settings = Locked(Settings())
    private let peers = Locked<(next: Int, byID: [Int: Peer])>((0, [:]))

    /// The kind name of these outputs in events and compiled graphs.
    public static let kindName = "webrtc-preview"
    /// What the payloader sends and every transceiver offers.
    static let rtpCaps = "application/x-rtp,media=video,encoding-name=VP8,payload=96,clock-rate=90000"

    /// A WebRTC preview output named `name`.
    /// - Parameters:
    ///   - name: The output's name.
    ///   - size: The frame size; nil for the session preset's size.
    ///   - bitRate: The VP8 bit rate in bits per second.
    ///   - maxFrameRate: At most this many frames per second; nil for every frame.
    public init(name: String = "webrtc-preview", size: Size? = nil, bitRate: Int = 1_000_000, maxFrameRate: Double? = nil) {
        super.init(name: name)
        settings.withLock {
            $0.size = size
            $0.bitRate = bitRate
            $0.maxFrameRate = maxFrameRate
        }
    }

    /// `webrtc-preview`.
    public override var kind: String { Self.kindName }

    /// The frame size (nil: the session preset's size).
    public var size: Size? {
        get { settings[\.size] }
        set { settings[\.size] = newValue }
    }
    /// The VP8 bit rate in bits per second (default 1 Mbit/s).
    public var bitRate: Int {
        get { settings[\.bitRate] }
        set { settings[\.bitRate] = newValue }
    }
    /// At most this many frames per second (nil: every frame the camera gives).
    public var maxFrameRate: Double? {
        get { settings[\.maxFrameRate] }
        set { settings[\.maxFrameRate] = newValue }
    }

    /// True when this machine has what the output needs (webrtcbin, with libnice's elements, and the VP8 encoder).
    public static var isAvailable: Bool { ["webrtcbin", "nicesrc", "vp8enc", "rtpvp8pay"].allSatisfy(GStreamer.hasElement) }

    /// The viewers now.
    public var peerIDs: [Int] { peers.withLock { $0.byID.keys.sorted() } }

    /// A viewer's connection state (nil: no such viewer).
    public func connectionState(of peer: Int) -> PeerConnectionState? {
        peers.withLock { $0.byID[peer]?.webrtc }?.peerConnectionState
    }

    /// The wall-clock time (seconds since 1970) of the session's running time zero, while the branch
    /// runs: a frame with RTP timestamp T (90 kHz, 32 bits) was captured at `clockEpoch + T / 90000`
    /// (modulo the wrap, every 13 hours).
    public var clockEpoch: Double? {
        handleState.value?.runningTime.map { Date().timeIntervalSince1970 - Double($0) / 1e9 }
    }

    /// True once the viewer's answer was accepted.
    public func hasAnswer(_ peer: Int) -> Bool { peers.withLock { $0.byID[peer]?.answered ?? false } }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        guard current.bitRate >= 50_000 && current.bitRate <= 50_000_000 else {
            throw .invalidConfiguration(object: description, reason: "a bit rate is 50000 to 50000000 bits per second, not \(current.bitRate)")
        }
        var elements = try context.videoHead(leaky: true, maxBuffers: 1, size: current.size, format: "I420", maxRate: current.maxFrameRate)
        elements.append(
            ElementSpec(
                "vp8enc", name: "\(name)_encoder",
                [
                    ("deadline", "1"), ("cpu-used", "8"), ("threads", "2"), ("end-usage", "cbr"), ("lag-in-frames", "0"),
                    ("keyframe-max-dist", "60"), ("target-bitrate", "\(current.bitRate)"), ("error-resilient", "default"),
                ]))
        // timestamp-offset 0: an RTP timestamp is the frame's running time at 90 kHz, so a viewer can
        // tell when a frame was captured (`clockEpoch`).
        elements.append(
            ElementSpec(
                "rtpvp8pay", name: "\(name)_payloader",
                [("pt", "96"), ("mtu", "1200"), ("picture-id-mode", "15-bit"), ("timestamp-offset", "0")]))
        elements.append(ElementSpec("tee", name: "\(name)_peers", [("allow-not-linked", "true")]))
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
    }

    override func detach() {
        // The viewers' bins are inside the branch's bin: they leave with it.
        peers.withLock { $0.byID.removeAll() }
        super.detach()
    }

    /// Adds a viewer: its `queue ! webrtcbin` joins the running branch, and the offer is made and
    /// returned once ICE gathering is complete (within `timeout`). Throws `notRunning` while the output's
    /// branch is not running.
    public func addPeer(timeout: Duration = .seconds(10)) async throws(CaptureError) -> WebRTCOffer {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<WebRTCOffer, CaptureError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(CaptureError) in try self.addPeerBlocking(timeout: timeout) })
            }
        }
        return try result.get()
    }

    /// Hands the viewer's SDP answer to its webrtcbin.
    public func acceptAnswer(_ sdp: String, peer: Int, timeout: Duration = .seconds(5)) async throws(CaptureError) {
        guard let webrtc = peers.withLock({ $0.byID[peer]?.webrtc }) else {
            throw .invalidConfiguration(object: description, reason: "no WebRTC viewer \(peer)")
        }
        let object = "\(description), WebRTC viewer \(peer)"
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, CaptureError>, Never>) in
            DispatchQueue.global().async {
                do throws(GStreamerError) {
                    try webrtc.setRemoteAnswer(sdp, timeout: timeout)
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(.invalidConfiguration(object: object, reason: error.description)))
                }
            }
        }
        try result.get()
        peers.withLock { $0.byID[peer]?.answered = true }
        // The viewer decodes from a key frame: ask for one now rather than at the next interval.
        _ = peers.withLock({ $0.byID[peer]?.webrtc })?.staticPad("sink_0")?.requestKeyFrame()
    }

    /// Removes a viewer (nothing when it is not there). Its branch is unlinked at an idle moment of the
    /// tee's pad, then stopped; the other viewers go on.
    public func removePeer(_ peer: Int) async {
        guard let removed = peers.withLock({ $0.byID.removeValue(forKey: peer) }) else { return }
        guard let handle = handleState.value, let tee = handle.element("\(name)_peers") else { return }
        let unlinked = Promise<Void>()
        let sink = removed.bin.staticPad("sink")
        removed.teePad.addProbe(.idle) { pad, _ in
            if let sink { _ = pad.unlink(from: sink) }
            unlinked.succeed(())
            return .remove
        }
        _ = try? await unlinked.value(timeout: .seconds(2), timeoutError: .timedOut(waitingFor: "a WebRTC viewer to be unlinked", seconds: 2))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                _ = try? removed.bin.setState(.null)
                handle.bin.remove(removed.bin)
                tee.releaseRequestPad(removed.teePad)
                continuation.resume()
            }
        }
    }

    private func addPeerBlocking(timeout: Duration) throws(CaptureError) -> WebRTCOffer {
        guard let handle = handleState.value, let tee = handle.element("\(name)_peers") else { throw .notRunning(object: description) }
        let id = peers.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        let object = "\(description), WebRTC viewer \(id)"
        let bin: Bin, webrtc: Element, teePad: Pad
        do throws(GStreamerError) {
            bin = try Bin.empty(name: "\(name)_peer\(id)")
            let queue = try Element.make("queue", name: "\(name)_peer\(id)_queue")
            try queue.set("leaky", "downstream")
            try queue.set("max-size-buffers", "0")
            try queue.set("max-size-bytes", "0")
            try queue.set("max-size-time", "300000000")
            webrtc = try Element.make("webrtcbin", name: "\(name)_peer\(id)_webrtc")
            try webrtc.set("bundle-policy", "max-bundle")
            try bin.add(queue)
            try bin.add(webrtc)
            let sink = try webrtc.requestPad("sink_%u")
            try sink.configureSendOnlyTransceiver(caps: Self.rtpCaps)
            guard let queueSource = queue.staticPad("src"), let queueSink = queue.staticPad("sink") else {
                throw GStreamerError.noSuchPad(element: "queue", pad: "src/sink")
            }
            try queueSource.link(to: sink)
            _ = try bin.addGhostPad(name: "sink", target: queueSink)
            try handle.bin.add(bin)
            try bin.syncStateWithParent()
            teePad = try tee.requestPad("src_%u")
            guard let ghost = bin.staticPad("sink") else { throw GStreamerError.noSuchPad(element: bin.name, pad: "sink") }
            try teePad.link(to: ghost)
        } catch {
            throw CaptureError(error, object: object)
        }
        peers.withLock { $0.byID[id] = Peer(bin: bin, webrtc: webrtc, teePad: teePad) }
        do throws(CaptureError) {
            do throws(GStreamerError) { try webrtc.createOfferAsLocalDescription(timeout: timeout) } catch {
                throw CaptureError.pipelineBuildFailed(object: object, reason: error.description)
            }
            let deadline = ContinuousClock.now + timeout
            while !webrtc.iceGatheringComplete {
                guard ContinuousClock.now < deadline else {
                    throw CaptureError.timedOut(waitingFor: "the ICE candidates of \(object)", seconds: timeout.seconds)
                }
                usleep(20_000)
            }
            guard let sdp = webrtc.localSDP else { throw CaptureError.pipelineBuildFailed(object: object, reason: "webrtcbin gave no local description") }
            return WebRTCOffer(peer: id, sdp: sdp)
        } catch {
            Task { await self.removePeer(id) }
            throw error
        }
    }
}
