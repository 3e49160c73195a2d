import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureServer

/// The server around a running test-pattern session, over real sockets on 127.0.0.1.
@Suite("Web server", .serialized)
struct WebServerTests {
    @Test func pageStatusPhotoGalleryAndDownload() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let port = served.port
        let page = try request(port, "GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(page.text.contains("id=\"shutter\""))
        #expect(!page.text.contains("http://") && !page.text.contains("https://"))  // nothing fetched from elsewhere

        let status = try request(port, "GET", "/api/status").json
        #expect(status["running"] as? Bool == true)
        #expect(status["mode"] as? String == "photo")

        let shot = try request(port, "POST", "/api/photo")
        #expect(shot.status == 200, "\(shot.text)")
        let listed = try await eventually { (try request(port, "GET", "/api/media").json["items"] as? [[String: Any]])?.isEmpty == false }
        #expect(listed)
        let items = try #require(try request(port, "GET", "/api/media").json["items"] as? [[String: Any]])
        let url = try #require(items.first?["url"] as? String)
        #expect(items.first?["kind"] as? String == "photo")
        let download = try request(port, "GET", url + "?download=1")
        #expect(download.status == 200)
        #expect(download.headers["content-disposition"]?.hasPrefix("attachment") == true)
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: served.folder + "/media/" + (items.first?["name"] as? String ?? "")))
        #expect(download.body == Array(onDisk))
        #expect(download.body.starts(with: [0xFF, 0xD8]))
    }

    @Test func eventsStreamInTheJSONOfCaptureRun() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let port = served.port
        let events = try TestConnection(port: port)
        events.send(Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        let head = events.receive(until: { String(decoding: $0, as: UTF8.self).contains(": connected") })
        #expect(String(decoding: head, as: UTF8.self).contains("text/event-stream"))
        #expect(try request(port, "POST", "/api/photo").status == 200)
        let text = String(decoding: events.receive(until: { String(decoding: $0, as: UTF8.self).contains("\"photo-saved\"") }), as: UTF8.self)
        let line = try #require(text.components(separatedBy: "\n").first { $0.contains("\"photo-saved\"") })
        #expect(line.hasPrefix("data: {\"event\": \"photo-saved\", \"time\": "))
        #expect(line.contains("\"location\": \"\(served.folder)/media/IMG_0001.jpg\""))
    }

    @Test func mjpegViewersAddAndRemoveTheirOutput() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let port = served.port
        let outputs = { served.runner.session?.outputs.map(\.name) ?? [] }
        #expect(!outputs().contains(CaptureWebServer.Names.jpegPreview))
        do {
            let viewer = try TestConnection(port: port)
            viewer.send(Array("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            let bytes = viewer.receive(until: { jpegParts(in: $0) >= 3 })
            #expect(jpegParts(in: bytes) >= 3)
            #expect(String(decoding: bytes.prefix(300), as: UTF8.self).contains("multipart/x-mixed-replace; boundary=capture-frame"))
            #expect(String(decoding: bytes.prefix(600), as: UTF8.self).contains("X-Capture-Time: "))
            #expect(outputs().contains(CaptureWebServer.Names.jpegPreview))
            #expect(try request(port, "GET", "/api/status").json["viewers"] as? [String: Int] == ["mjpeg": 1, "webrtc": 0])
        }
        // The viewer closed: its output leaves the session.
        #expect(await eventually { !outputs().contains(CaptureWebServer.Names.jpegPreview) })
        #expect(served.runner.session?.isRunning == true)
    }

    @Test func modeSwitchRecordingAndAStalledViewer() async throws {
        var limits = HTTPLimits()
        limits.writeTimeout = .seconds(1)
        let served = try await ServedSession(limits: limits)
        defer { Task { await served.stop() } }
        let port = served.port
        // One viewer that reads, one that never does (a tiny receive buffer).
        let reader = try TestConnection(port: port)
        reader.send(Array("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        let stalled = try TestConnection(port: port, receiveBuffer: 4096)
        stalled.send(Array("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        #expect(jpegParts(in: reader.receive(until: { jpegParts(in: $0) >= 2 })) >= 2)

        #expect(try request(port, "POST", "/api/recording/start").status == 409)  // photo mode
        #expect(try request(port, "POST", "/api/mode", body: "{\"mode\": \"sideways\"}").status == 400)
        let video = try request(port, "POST", "/api/mode", body: "{\"mode\": \"video\"}")
        #expect(video.status == 200, "\(video.text)")
        #expect(try request(port, "GET", "/api/mode").json["mode"] as? String == "video")
        var seen = 0
        let before = jpegParts(in: reader.receive(until: { jpegParts(in: $0) >= 1 }))
        #expect(try request(port, "POST", "/api/recording/start").status == 200)
        #expect(try request(port, "POST", "/api/mode", body: "{\"mode\": \"photo\"}").status == 409)  // recording
        // About two seconds of recording while the reader reads and the other one does not.
        for _ in 0..<40 { seen += jpegParts(in: reader.receive(until: { jpegParts(in: $0) >= 1 })) }
        let stop = try request(port, "POST", "/api/recording/stop")
        #expect(stop.status == 200, "\(stop.text)")
        #expect(before >= 1 && seen >= 40)
        let movie = served.folder + "/media/VID_0001.mp4"
        #expect(FileManager.default.fileExists(atPath: movie))
        let probe = try ChildProcess([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
            "stream=nb_read_frames,width,height", "-of", "csv=p=0", movie,
        ]).finish()
        #expect(probe.status == 0, "\(probe.error)")
        let fields = probe.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        #expect(fields.count == 3 && (Int(fields[2]) ?? 0) >= 20, "\(probe.output)")
        // The stalled viewer is closed by the server (its send timed out); the reader goes on.
        #expect(await eventually(300) { served.server.http.streamCount == 1 })
        #expect(jpegParts(in: reader.receive(until: { jpegParts(in: $0) >= 2 })) >= 2)
        #expect(try request(port, "POST", "/api/mode", body: "{\"mode\": \"photo\"}").status == 200)
        #expect(served.runner.session?.outputs.contains { $0 is CaptureMovieFileOutput } == false)
    }

    @Test func refusesWhatIsNotAllowed() async throws {
        var limits = HTTPLimits()
        limits.maxBodyBytes = 1024
        let served = try await ServedSession(limits: limits)
        defer { Task { await served.stop() } }
        let port = served.port
        // A file outside the media folder, and links to it from inside.
        let secret = served.folder + "/secret.jpg"
        try Data([0xFF, 0xD8, 1, 2]).write(to: URL(fileURLWithPath: secret))
        symlink(secret, served.folder + "/media/link.jpg")
        for target in ["/media/../secret.jpg", "/media/%2e%2e/secret.jpg", "/media/..%2fsecret.jpg", "/media/link.jpg", "/media//etc/passwd"] {
            let response = try request(port, "GET", target)
            #expect(response.status == 403 || response.status == 404, "\(target): \(response.status)")
            #expect(!response.body.starts(with: [0xFF, 0xD8]), "\(target)")
        }
        #expect(try request(port, "POST", "/api/mode", body: String(repeating: "x", count: 2000)).status == 413)
        #expect(
            try rawRequest(port, Array(("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n").utf8)).status
                == 431)
        #expect(try request(port, "GET", "/nothing").status == 404)
        #expect(try request(port, "DELETE", "/api/photo").status == 405)
        // Loopback without a token: only this machine's names as Host (DNS rebinding), and changes only
        // from the server's own page.
        #expect(try request(port, "GET", "/api/status", headers: ["Host": "evil.example:\(port)"]).status == 403)
        #expect(try rawRequest(port, Array("GET /api/status HTTP/1.1\r\nHost: evil.example\r\n\r\n".utf8)).status == 403)
        #expect(try request(port, "POST", "/api/photo", headers: ["Origin": "http://evil.example"]).status == 403)
        #expect(try request(port, "POST", "/api/photo", headers: ["Origin": "http://127.0.0.1:\(port)"]).status == 200)
    }

    @Test func beyondLoopbackEveryRequestNeedsTheToken() async throws {
        // Listens on every address; the test connects through 127.0.0.1 only.
        let served = try await ServedSession(listen: ListenAddress(host: "0.0.0.0", port: 0))
        defer { Task { await served.stop() } }
        let port = served.port
        let token = try #require(served.server.token)
        #expect(served.server.tokenWasGenerated && token.count == 32)
        for target in ["/", "/api/status", "/api/events", "/stream.mjpeg", "/api/media", "/media/IMG_0001.jpg"] {
            let response = try request(port, "GET", target)
            #expect(response.status == 401, "\(target)")
            #expect(response.headers["www-authenticate"] == "Bearer")
        }
        #expect(try request(port, "POST", "/api/photo").status == 401)
        // The token with its last character changed (to one it is not: a token may well end in "0").
        let wrong = token.dropLast() + (token.last == "0" ? "1" : "0")
        #expect(try request(port, "GET", "/api/status?token=" + wrong).status == 401)
        #expect(try request(port, "GET", "/api/status", headers: ["Authorization": "Bearer wrong"]).status == 401)
        #expect(try request(port, "GET", "/api/status?token=\(token)").status == 200)
        #expect(try request(port, "GET", "/api/status", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(try request(port, "POST", "/api/photo", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(served.server.url.hasSuffix("/?token=\(token)"))
    }

    @Test func tooManyConnectionsAreTurnedAway() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 2
        limits.maxStreams = 1
        let served = try await ServedSession(limits: limits)
        defer { Task { await served.stop() } }
        let port = served.port
        let first = try TestConnection(port: port)
        first.send(Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        _ = first.receive(until: { String(decoding: $0, as: UTF8.self).contains(": connected") })
        // A second stream is refused (one at most); it was the second connection.
        #expect(try request(port, "GET", "/api/events").status == 503)
        let idle = try TestConnection(port: port)  // holds the second connection slot
        #expect(await eventually { served.server.http.connectionCount == 2 })
        #expect(try request(port, "GET", "/api/status").status == 503)
        _ = idle
    }
}
