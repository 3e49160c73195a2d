import CGStreamer
import CGStreamerShim

/// The state of a webrtcbin's peer connection (`GstWebRTCPeerConnectionState`).
public enum PeerConnectionState: Int, Sendable {
    /// The states, by their `GstWebRTCPeerConnectionState` value:
    /// - `new`: nothing is connecting yet.
    /// - `connecting`: the ICE and DTLS transports are connecting.
    /// - `connected`: every transport is connected; media can flow.
    /// - `disconnected`: a transport lost its connection (it may come back).
    /// - `failed`: a transport failed; the connection will not recover.
    /// - `closed`: the connection was closed.
    case new = 0, connecting, connected, disconnected, failed, closed
}

extension Element {
    /// Creates an offer and makes it the local description (webrtcbin), waiting for each step up to
    /// `timeout`. Blocks the calling thread: call it off Swift's cooperative pool. The corresponding C
    /// signals are "create-offer" and "set-local-description".
    public func createOfferAsLocalDescription(timeout: Duration) throws(GStreamerError) {
        var error: UnsafeMutablePointer<CChar>?
        guard capture_webrtc_create_offer(element, Self.milliseconds(timeout), &error) != 0 else {
            throw .webRTCFailed(element: name, message: takeString(error) ?? "create-offer failed")
        }
    }

    /// Sets an SDP answer as the remote description (webrtcbin), waiting up to `timeout`. Blocks the
    /// calling thread. The corresponding C signal is "set-remote-description".
    public func setRemoteAnswer(_ sdp: String, timeout: Duration) throws(GStreamerError) {
        var error: UnsafeMutablePointer<CChar>?
        guard capture_webrtc_set_remote_answer(element, sdp, Self.milliseconds(timeout), &error) != 0 else {
            throw .webRTCFailed(element: name, message: takeString(error) ?? "set-remote-description failed")
        }
    }

    /// The local description's SDP (webrtcbin), once there is one.
    public var localSDP: String? { takeString(capture_webrtc_local_sdp(element)) }

    /// True once ICE candidate gathering is complete (webrtcbin's "ice-gathering-state").
    public var iceGatheringComplete: Bool { capture_webrtc_ice_gathering_state(element) == 2 }

    /// webrtcbin's "connection-state".
    public var peerConnectionState: PeerConnectionState { PeerConnectionState(rawValue: Int(capture_webrtc_connection_state(element))) ?? .new }

    private static func milliseconds(_ duration: Duration) -> guint {
        guint(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

extension Pad {
    /// Makes a webrtcbin sink pad's transceiver send-only, offering exactly `caps`.
    public func configureSendOnlyTransceiver(caps: String) throws(GStreamerError) {
        guard capture_webrtc_pad_configure(pad, caps) != 0 else { throw .invalidCaps(caps) }
    }

    /// Asks the encoder upstream of this pad for a key frame now (an upstream force-key-unit event).
    @discardableResult
    public func requestKeyFrame() -> Bool { capture_pad_request_key_frame(pad) != 0 }
}
