import Capture
import CaptureControl
import Foundation

/// What the web app downloads and watches: files of the session's folders, WebRTC viewers, the event
/// stream and the MJPEG preview.
extension CaptureWebServer {
    // MARK: Downloads

    func download(_ request: HTTPRequest) -> HTTPResponse {
        let id = String(request.path.dropFirst("/media/".count))
        do throws(MediaAccessError) {
            let (item, descriptor) = try catalog.open(id)
            let name = (item.id as NSString).lastPathComponent
            let disposition = request.query["download"] != nil ? "attachment" : "inline"
            let safeName = String(name.unicodeScalars.filter { $0.isASCII && $0.value >= 32 && $0 != "\"" && $0 != "\\" }.map(Character.init))
            let headers: [(name: String, value: String)] = [
                ("Content-Type", item.contentType),
                ("Content-Disposition", "\(disposition); filename=\"\(safeName)\""),
            ]
            return HTTPResponse(headers: headers, body: .file(descriptor: descriptor, length: item.size))
        } catch {
            switch error {
            case .outside, .notRegularFile: return .error(.forbidden, error.name, error.description)
            case .notFound: return .error(.notFound, error.name, error.description)
            }
        }
    }

    // MARK: WebRTC

    /// A new viewer: the WebRTC output joins the session with the first one; the offer comes back with
    /// every ICE candidate in it.
    func webrtcOffer() async -> HTTPResponse {
        guard CaptureWebRTCPreviewOutput.isAvailable else {
            return .error(.unavailable, "webrtc-unavailable", "webrtcbin, libnice's elements or vp8enc are not installed; use /stream.mjpeg")
        }
        guard webrtcPeers.withLock({ $0.count }) < configuration.limits.maxStreams else {
            return .error(.unavailable, "too-many-streams", "\(configuration.limits.maxStreams) viewers are watching; try again later")
        }
        webrtc.viewerCame()
        var output: CaptureWebRTCPreviewOutput?
        for _ in 0..<200 {
            if let ready = webrtc.output, ready.isAttached { output = ready; break }
            if webrtc.lastError != nil || !(session?.isRunning ?? false) { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        guard let output else {
            webrtc.viewerLeft()
            return .error(.unavailable, "preview-unavailable", webrtc.lastError ?? "the session is not running")
        }
        do throws(CaptureError) {
            let offer = try await output.addPeer()
            // The client's id: random (a page cannot guess another's, nor a stale one close a new
            // viewer), an integer JavaScript holds exactly.
            let id = webrtcPeers.withLock { peers -> Int in
                var id: Int
                repeat { id = Int.random(in: 1...(1 << 53 - 1)) } while peers[id] != nil
                peers[id] = WebRTCViewer(peer: offer.peer, offered: .now)
                return id
            }
            return .json(["id": id, "type": "offer", "sdp": offer.sdp])
        } catch {
            webrtc.viewerLeft()
            return Self.failureResponse(error)
        }
    }

    func webrtcAnswer(_ request: HTTPRequest) async -> HTTPResponse {
        guard let body = request.jsonObject, let id = body["id"] as? Int, let sdp = body["sdp"] as? String else {
            return .error(.badRequest, "bad-request", "send {\"id\": N, \"sdp\": \"v=0...\"}")
        }
        guard let peer = webrtcPeers.withLock({ $0[id]?.peer }), let output = webrtc.output else {
            return .error(.notFound, "no-viewer", "no WebRTC viewer \(id); ask for an offer first")
        }
        do throws(CaptureError) {
            try await output.acceptAnswer(sdp, peer: peer)
            return .json(["ok": true])
        } catch {
            await closeWebRTCViewer(id)
            return .error(.badRequest, "bad-answer", error.description)
        }
    }

    func closeWebRTCViewer(_ id: Int) async {
        guard let viewer = webrtcPeers.withLock({ $0.removeValue(forKey: id) }) else { return }
        await webrtc.output?.removePeer(viewer.peer)
        webrtc.viewerLeft()
    }

    /// Viewers that never answered (30 s), whose connection failed or closed, or that stayed
    /// disconnected for 10 s, are removed; the last one takes the output with it.
    func checkWebRTCViewers() async {
        let now = ContinuousClock.now
        let viewers = webrtcPeers.value
        guard !viewers.isEmpty else { return }
        let output = webrtc.output
        for (id, viewer) in viewers {
            let state = output?.connectionState(of: viewer.peer)
            if state == .connected {
                webrtcPeers.withLock { $0[id]?.lastConnected = now }
                continue
            }
            let since = viewer.lastConnected ?? viewer.offered
            let gone =
                state == nil || state == .failed || state == .closed
                || (viewer.lastConnected == nil && since.duration(to: now) > .seconds(30))
                || (viewer.lastConnected != nil && since.duration(to: now) > .seconds(10))
            if gone { await closeWebRTCViewer(id) }
        }
    }

    // MARK: Streams

    func eventStream() -> HTTPResponse {
        let events = self.events
        return HTTPResponse(
            headers: [("Content-Type", "text/event-stream; charset=utf-8")],
            body: .stream { stream in
                let (id, queue) = events.add(capacity: 1024)
                defer { events.remove(id) }
                guard stream.write(Array("retry: 2000\n: connected\n\n".utf8)) else { return }
                var droppedSeen = 0
                while !stream.isClosed && !queue.isClosed {
                    let lines = stream.take(from: queue, waiting: .seconds(15))
                    var text = lines.isEmpty ? ": keep-alive\n\n" : lines.map { "data: \($0)\n\n" }.joined()
                    let dropped = queue.droppedCount
                    if dropped > droppedSeen {
                        text = ": \(dropped - droppedSeen) events dropped (this client was behind)\n\n" + text
                        droppedSeen = dropped
                    }
                    guard stream.write(Array(text.utf8)) else { return }
                }
            })
    }

    func mjpegStream() -> HTTPResponse {
        let viewers = jpegViewers, hub = jpeg
        let boundary = "capture-frame"
        return HTTPResponse(
            headers: [("Content-Type", "multipart/x-mixed-replace; boundary=\(boundary)")],
            body: .stream { stream in
                let (id, queue) = viewers.add(capacity: 1)
                hub.viewerCame()
                defer {
                    viewers.remove(id)
                    hub.viewerLeft()
                }
                var waited = 0
                while !stream.isClosed && !queue.isClosed {
                    guard let frame = stream.take(from: queue, waiting: .seconds(1)).last else {
                        // No frame for 10 s: the preview could not be added (or the session is stopped); the
                        // connection stays open while the session is stopped, not forever when it failed.
                        waited += 1
                        if hub.lastError != nil && waited >= 10 { return }
                        continue
                    }
                    waited = 0
                    let captured = frame.capturedAt.map { "X-Capture-Time: \(String(format: "%.3f", $0 * 1000))\r\n" } ?? ""
                    let head = "--\(boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.bytes.count)\r\n\(captured)\r\n"
                    guard stream.write(Array(head.utf8) + frame.bytes + [13, 10]) else { return }
                }
            })
    }
}
