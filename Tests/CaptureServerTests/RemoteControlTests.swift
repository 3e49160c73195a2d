import Capture
import CaptureControl
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureServer

/// The web API as one more remote caller of the session's controller, on a running test-pattern
/// session on loopback.
@Suite("The web API through the controller", .serialized)
struct RemoteControlTests {
    /// A request to a loopback address other than 127.0.0.1.
    func loopbackRequest(host: String, _ port: UInt16, _ target: String) throws -> RawResponse {
        let connection = try TestConnection(port: port, host: host)
        connection.send(Array("GET \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\n\r\n".utf8))
        return parseResponse(connection.receiveAll())
    }

    @Test func aPhotoAnswersWithItsFile() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let answer = try request(served.port, "POST", "/api/photo")
        #expect(answer.status == 200, "\(answer.text)")
        let photos = try #require(answer.json["photos"] as? [[String: Any]])
        let name = try #require(photos.first?["name"] as? String)
        let url = try #require(photos.first?["url"] as? String)
        #expect(!name.hasPrefix("/"))
        #expect(url == "/media/" + name)
        // The same file, downloaded, is a JPEG.
        let file = try request(served.port, "GET", url)
        #expect(file.status == 200)
        #expect(Array(file.body.prefix(3)) == [0xFF, 0xD8, 0xFF])
    }

    @Test func anotherLoopbackAddressIsThisMachine() async throws {
        let served = try await ServedSession(listen: ListenAddress(host: "127.0.0.2", port: 0))
        defer { Task { await served.stop() } }
        #expect(served.server.url == "http://127.0.0.2:\(served.port)/")
        let status = try loopbackRequest(host: "127.0.0.2", served.port, "/api/status")
        #expect(status.status == 200, "\(status.text)")
        // Another name is still refused (DNS rebinding).
        let connection = try TestConnection(port: served.port, host: "127.0.0.2")
        connection.send(Array("GET /api/status HTTP/1.1\r\nHost: evil.example:\(served.port)\r\n\r\n".utf8))
        #expect(parseResponse(connection.receiveAll()).status == 403)
    }

    @Test func webRTCViewerIdsCannotBeGuessed() async throws {
        guard CaptureWebRTCPreviewOutput.isAvailable else { return }
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        var ids: [Int] = []
        for _ in 0..<2 {
            let offer = try request(served.port, "POST", "/api/webrtc/offer")
            #expect(offer.status == 200, "\(offer.text)")
            ids.append(try #require(offer.json["id"] as? Int))
        }
        #expect(Set(ids).count == 2)
        // Not the output's own small peer numbers: a close of 1 or 2 closes nobody.
        #expect(ids.allSatisfy { $0 > 1 << 20 })
        for stale in [0, 1, 2, 3] where !ids.contains(stale) {
            _ = try request(served.port, "POST", "/api/webrtc/close", body: "{\"id\": \(stale)}")
        }
        #expect(served.server.webrtcPeers.value.count == 2)
        _ = try request(served.port, "POST", "/api/webrtc/close", body: "{\"id\": \(ids[0])}")
        #expect(Set(served.server.webrtcPeers.value.keys) == [ids[1]])
    }

    /// Thousands of requests with hostile paths, methods and bodies; afterwards nothing exists outside
    /// the media folder and the server still answers.
    @Test func hostileRequestsLeaveNothingOutsideAndTheServerAnswers() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let media = served.folder + "/media"
        try FileManager.default.createDirectory(atPath: served.folder + "/trap", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: media + "/away", withDestinationPath: served.folder + "/trap")
        _ = FileManager.default.createFile(atPath: served.folder + "/trap/secret.jpg", contents: Data([0xFF, 0xD8, 0xFF]))
        #expect(mkfifo(media + "/fifo.mp4", 0o600) == 0)
        var random = SplitMix64(seed: 0x2025_1203)
        let targets = [
            "/media/", "/media/../trap/secret.jpg", "/media/away/secret.jpg", "/media/%2e%2e/trap/secret.jpg", "/media/fifo.mp4",
            "/api/mode", "/api/torch", "/api/webrtc/close", "/api/webrtc/answer", "/api/media", "/api/recording/stop", "/api/flash",
            "/api/picker", "/api/picker/item?name=../trap/secret.jpg", "/api/crop", "/api/trim", "/api/thumbnail",
            "/api/frame?source=away/secret.jpg&time=0", "/api/picker/preview?name=away/secret.jpg", "/api/picker/preview?name=../trap/secret.jpg",
        ]
        var leaked = 0
        for index in 0..<2000 {
            let target =
                targets.randomElement(using: &random)!
                + (index % 3 == 0 ? HostileText.path(&random).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "" : "")
            let method = ["GET", "POST", "PUT", "DELETE"].randomElement(using: &random)!
            let source = ["../trap/secret.jpg", "away/secret.jpg", "fifo.mp4", served.folder + "/trap/secret.jpg"].randomElement(using: &random)!
            let body =
                "{\"mode\": \"\(["video", "photo", "x"].randomElement(using: &random)!)\", \"id\": \(random.next() % 5), \"on\": true, \"sdp\": \"v=0\", "
                + "\"source\": \"\(source)\", \"location\": \"../trap/out.jpg\", \"from\": 0, \"to\": 1, \"time\": 0, "
                + "\"crop\": {\"x\": 0, \"y\": 0, \"width\": 1, \"height\": 1}}"
            let answer = try request(served.port, method, target, body: method == "POST" ? body : nil)
            if answer.body.starts(with: [0xFF, 0xD8, 0xFF]), target.contains("secret") { leaked += 1 }
        }
        #expect(leaked == 0)
        #expect(try request(served.port, "GET", "/api/status").status == 200)
        #expect(try FileManager.default.contentsOfDirectory(atPath: served.folder + "/trap") == ["secret.jpg"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: served.folder).sorted() == ["media", "trap"])
    }

    @Test func sessionErrorsBecomeStatusesAtTheEdge() {
        #expect(CaptureWebServer.status(for: .notPermitted(what: "/x", reason: "r")) == .forbidden)
        #expect(CaptureWebServer.status(for: .busy(what: "media work", reason: "r")) == .unavailable)
        #expect(CaptureWebServer.status(for: .notRunning(object: "s")) == .conflict)
        #expect(CaptureWebServer.status(for: .duplicateName(kind: "output", name: "photo")) == .conflict)
        #expect(CaptureWebServer.status(for: .deviceBusy(id: "/dev/video0", detail: "")) == .unavailable)
        #expect(CaptureWebServer.status(for: .unknownOutput(name: "x")) == .badRequest)
        #expect(CaptureWebServer.status(for: .diskFull(path: "/x")) == .internalError)
    }
}
