import CaptureTestSupport
import Foundation
import Testing

/// `capture run --events mqtt://...` against Debian's mosquitto on 127.0.0.1 (started and stopped here).
@Suite(.serialized) struct MQTTCommandTests {
    static let file = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern
        output, name=photo, kind=photo, location="photo-%d.jpg"

        """

    /// Events and a command through the CLI, then the process is killed: the broker publishes its last
    /// will, `offline`, retained.
    @Test func theLastWillFiresWhenTheProcessIsKilled() async throws {
        let scratch = try Scratch()
        try scratch.write("camera.pipeline", Self.file)
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: scratch.path)
        try broker.start()
        let (subscriber, output) = try broker.subscribe("site/cam1/#")
        let child = try ChildProcess(
            [
                captureBinary, "run", scratch.file("camera.pipeline"), "--no-keys", "--duration", "60",
                "--output-dir", scratch.path, "--events", "mqtt://127.0.0.1:\(broker.port)/site/cam1",
            ], discardOutput: true)
        #expect(await output.wait { $0.contains("site/cam1/available online") && $0.contains { $0.hasPrefix("site/cam1/session-started ") } })
        try broker.publish("site/cam1/command", "capture-photo, output=photo")
        #expect(
            await output.wait {
                $0.contains(#"site/cam1/reply {"seq": 1, "command": "capture-photo, output=photo", "ok": true, "taken": 1, "photos": ["photo-1.jpg"]}"#)
            })
        #expect(await output.wait { $0.contains { $0.hasPrefix("site/cam1/photo-saved ") } })
        #expect(FileManager.default.fileExists(atPath: scratch.file("photo-1.jpg")))
        child.signal(SIGKILL)
        #expect(child.wait().status == 128 + SIGKILL)
        #expect(await output.wait { $0.last == "site/cam1/available offline" })
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()
        let late = try tool(["mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "site/cam1/available", "-C", "1", "-W", "10"])
        #expect(late.output == "offline\n")
        broker.stop()
    }

    @Test(arguments: [
        (["--events", "http://127.0.0.1/cam"], "scheme"),
        (["--events", "mqtt://127.0.0.1/a/#"], "'#'"),
        (["--mqtt-user", "u"], "needs --events"),
        (["--mqtt-insecure"], "needs --events"),
    ])
    func badMQTTOptionsAreUsageErrors(_ extra: [String], _ message: String) throws {
        let scratch = try Scratch()
        try scratch.write("camera.pipeline", Self.file)
        let result = try capture(["run", scratch.file("camera.pipeline"), "--no-keys", "--duration", "1"] + extra, in: scratch.path)
        #expect(result.status == 64)
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func anUnreadablePasswordFileIsRefusedBeforeTheSessionStarts() throws {
        let scratch = try Scratch()
        try scratch.write("camera.pipeline", Self.file)
        let result = try capture([
            "run", scratch.file("camera.pipeline"), "--no-keys", "--duration", "1", "--events", "mqtt://127.0.0.1:1/cam",
            "--mqtt-user", "u", "--mqtt-password-file", scratch.file("missing"),
        ])
        #expect(result.status == 65)
        #expect(result.error.contains("password file"), "\(result.error)")
        #expect(!result.output.contains("session-started"))
    }
}
