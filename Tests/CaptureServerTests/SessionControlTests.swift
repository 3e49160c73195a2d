import Capture
import Foundation
import PipelineFile
import Testing

@testable import CaptureServer

@Suite("Serving: the session's own controls", .serialized)
struct SessionControlTests {
    @Test func theBuiltInSessionIsServePipeline() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("Pipelines/serve.pipeline"), encoding: .utf8)
        #expect(file == CaptureWebServer.defaultPipeline)
        let document = try PipelineDocument.parse(CaptureWebServer.defaultPipeline)
        #expect(document.isFreeRunning)
        #expect(document.outputs.map(\.name) == ["photo", "codes"])
    }

    @Test func stopAndStartTheCameraWhileServing() async throws {
        let served = try await ServedSession()
        defer { Task { await served.stop() } }
        let port = served.port
        let stopped = try request(port, "POST", "/api/session/stop")
        #expect(stopped.status == 200, "\(stopped.text)")
        #expect(await eventually { served.runner.session?.isRunning == false })
        // The server outlives the session: it answers, and a photo is refused until the camera starts.
        #expect(try request(port, "GET", "/api/status").json["running"] as? Bool == false)
        #expect(try request(port, "POST", "/api/photo").status == 409)
        let started = try request(port, "POST", "/api/session/start")
        #expect(started.status == 200, "\(started.text)")
        #expect(try request(port, "POST", "/api/photo").status == 200)
        // Controls the test pattern does not have are refused with the camera's error.
        let torch = try request(port, "POST", "/api/torch", body: "{\"on\": true}")
        #expect(torch.status == 503, "\(torch.text)")
        #expect(try request(port, "POST", "/api/camera").status == 503)
    }
}
