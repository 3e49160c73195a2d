import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureMQTT
@testable import PipelineFile

@Suite("MQTT URLs and command text")
struct MQTTURLTests {
    @Test(arguments: [
        ("mqtt://127.0.0.1/cam1", "mqtt://127.0.0.1:1883/cam1"),
        ("mqtt://broker.lan:1884/site/cams/front", "mqtt://broker.lan:1884/site/cams/front"),
        ("mqtts://broker.lan/cam_2", "mqtts://broker.lan:8883/cam_2"),
        ("MQTT://[::1]:1883/a.b", "mqtt://[::1]:1883/a.b"),
    ])
    func acceptedURLs(_ text: String, _ shown: String) throws {
        #expect(try MQTTURL(text).description == shown)
    }

    @Test(arguments: [
        ("http://127.0.0.1/cam", "scheme"),
        ("mqtt://127.0.0.1", "prefix"),
        ("mqtt://127.0.0.1/", "empty"),
        ("mqtt://127.0.0.1/a//b", "empty level"),
        ("mqtt://127.0.0.1/a/+/b", "wildcard"),
        ("mqtt://127.0.0.1/a/#", "'#'"),
        ("mqtt://127.0.0.1/$SYS", "broker's"),
        ("mqtt://127.0.0.1/a b", "spaces"),
        ("mqtt://127.0.0.1/a%2Fb", "letters, digits"),
        ("mqtt://127.0.0.1:0/cam", "port"),
        ("mqtt://127.0.0.1:99999/cam", "port"),
        ("mqtt://user:pw@127.0.0.1/cam", "--mqtt-user"),
        ("mqtt://host_name/cam", "host"),
        ("mqtt://127.0.0.1/cam?x=1", "query"),
    ])
    func refusedURLs(_ text: String, _ reason: String) {
        #expect {
            _ = try MQTTURL(text)
        } throws: { error in
            guard let error = error as? CaptureError, case .invalidMqttUrl(_, let why) = error else { return false }
            return error.name == "invalid-mqtt-url" && why.contains(reason)
        }
    }

    @Test func optionsAreChecked() throws {
        let url = try MQTTURL("mqtt://127.0.0.1/cam")
        func refused(_ options: MQTTOptions) -> String? {
            do {
                _ = try MQTTEventPublisher(url: url, options: options)
                return nil
            } catch {
                return error.name
            }
        }
        #expect(refused(MQTTOptions(user: "u", passwordFile: "/nonexistent/password")) == "invalid-mqtt-options")
        #expect(refused(MQTTOptions(caFile: "/nonexistent/ca.pem")) == "invalid-mqtt-options")
        #expect(refused(MQTTOptions(certFile: "/etc/hostname")) == "invalid-mqtt-options")
        #expect(refused(MQTTOptions(insecure: true)) == "invalid-mqtt-options")
        #expect(refused(MQTTOptions(clientID: "an id with spaces")) == "invalid-mqtt-options")
        #expect(refused(MQTTOptions()) == nil)
    }

    /// The password is the file's first line, as mosquitto_pub reads it, whatever its line endings.
    @Test func thePasswordIsTheFirstLineOfItsFile() throws {
        let directory = try TemporaryDirectory()
        let url = try MQTTURL("mqtt://127.0.0.1/cam")
        for (text, password) in [("pa ss\n2\n", "pa ss"), ("pa ss\r\n2\r\n", "pa ss"), ("pa ss", "pa ss"), ("\r\n", "")] {
            try text.write(toFile: directory.path("password"), atomically: true, encoding: .utf8)
            let options = MQTTOptions(user: "u", passwordFile: directory.path("password"))
            #expect(try options.resolved(for: url).password == password, "\(text.debugDescription)")
        }
        // A device or a FIFO is no password file (read to its end, /dev/zero never ended); nor is a long file.
        #expect(mkfifo(directory.path("fifo"), 0o600) == 0)
        try String(repeating: "p", count: 5000).write(toFile: directory.path("long"), atomically: true, encoding: .utf8)
        for path in ["/dev/zero", directory.path("fifo"), directory.path("long")] {
            #expect(throws: CaptureError.self, "\(path)") { try MQTTOptions(user: "u", passwordFile: path).resolved(for: url) }
        }
    }

    static let document = """
        input, name=camera, device=test-pattern
        output, name=photo, kind=photo
        output, name=movie, kind=movie
        """

    @Test func commandsAreReadAsOneActionAgainstTheLiveSession() throws {
        let document = try PipelineDocument.parse(Self.document)
        let session = try SessionBuilder(document: document).makeSession().session
        func action(_ text: String) throws -> Action { try PipelineDocument.action(parsing: text, in: session) }
        #expect(try action("capture-photo, output=photo").statementName == "capture-photo")
        #expect(try action("start-recording, output=movie").statementName == "start-recording")
        #expect(try action("set-preset, preset=vga640x480").statementName == "set-preset")
        for refused in [
            "", "capture-photo, output=nope", "wait, duration=1", "repeat, count=2, actions={ \"stop\" }",
            "input, name=x, device=test-pattern", "capture-photo\nstop", "capture-photo; rm -rf /", "$(reboot)",
            String(repeating: "a", count: 5000), "add-output, name=photo, kind=photo",
        ] {
            #expect(throws: PipelineDiagnostics.self, "\(refused.prefix(40))") { try action(refused) }
        }
        // The checker reads the session as it is now, not the file: a name removed can be added again,
        // an output added (by another command) can be removed, and a removed one is not there.
        try session.removeOutput(try #require(session.output(named: "photo")))
        #expect(try action("add-output, name=photo, kind=photo").statementName == "add-output")
        #expect(throws: PipelineDiagnostics.self) { try action("capture-photo, output=photo") }
        try session.addOutput(CaptureMovieFileOutput(name: "s"))
        #expect(try action("remove-output, name=s").statementName == "remove-output")
        #expect(try action("stop-recording, output=s").statementName == "stop-recording")
    }
}

/// Against Debian's mosquitto on 127.0.0.1 (a free port, started and stopped here), read back with
/// mosquitto_sub.
@Suite("Events and commands over MQTT", .serialized)
struct MQTTEventTests {
    static let camera = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern, pattern=ball
        output, name=photo, kind=photo, location="photo-%d.jpg"
        output, name=movie, kind=movie, location="movie.mp4"

        """

    /// The `PREFIX/EVENT` messages of `lines` ("TOPIC PAYLOAD"), in order, without the broker's own topics.
    func eventMessages(_ lines: [String], prefix: String) -> [(topic: String, payload: String)] {
        lines.compactMap { line in
            guard let space = line.firstIndex(of: " ") else { return nil }
            let topic = String(line[..<space])
            guard topic.hasPrefix(prefix + "/"), !["available", "reply", "command", "ready"].contains(String(topic.dropFirst(prefix.count + 1))) else {
                return nil
            }
            return (topic, String(line[line.index(after: space)...]))
        }
    }

    /// Publishes a marker until the subscriber has printed it: from then on it receives what is published.
    func waitUntilSubscribed(_ broker: MosquittoBroker, _ output: OutputCollector, prefix: String) async throws -> Bool {
        for _ in 0..<50 {
            try broker.publish("\(prefix)/ready", "1")
            if await output.wait(timeout: .milliseconds(200), until: { $0.contains("\(prefix)/ready 1") }) { return true }
        }
        return false
    }

    @Test func everyEventOfAScenarioArrivesInOrderAndAvailabilityIsRetained() async throws {
        let directory = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: directory.path)
        try broker.start()
        let (subscriber, output) = try broker.subscribe("cam/#")
        #expect(try await waitUntilSubscribed(broker, output, prefix: "cam"))
        let text =
            Self.camera + """
                start
                wait, event=session-started
                capture-photo, output=photo
                wait, event=photo-saved
                start-recording, output=movie
                wait, duration=1
                stop-recording, output=movie
                wait, event=recording-finished
                expect, event=photo-saved, count=1
                """
        let runner = ScenarioRunner(
            document: try parsed(text, file: "scenario.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam")
        publisher.start()
        let result = await runner.run { event in publisher.publish(name: event.name, json: event.jsonLine) }
        await publisher.stop()
        #expect(result.exitCode == 0)
        #expect(await output.wait { $0.contains("cam/available offline") })
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()

        // Every event, on its topic, in order, with the JSON capture run --json prints.
        let received = eventMessages(output.lines, prefix: "cam")
        #expect(received.map(\.topic) == result.events.map { "cam/\($0.name)" })
        #expect(received.map(\.payload) == result.events.map(\.jsonLine))
        #expect(
            Set(result.events.map(\.name)).isSuperset(of: ["session-started", "photo-saved", "recording-started", "recording-finished", "session-stopped"]))
        #expect(publisher.droppedCount == 0)
        let lines = output.lines
        #expect(lines.firstIndex(of: "cam/available online") ?? .max < lines.firstIndex { $0.hasPrefix("cam/session-started ") } ?? -1)
        #expect(lines.last == "cam/available offline")
        // Retained: a subscriber that comes later reads offline at once.
        let late = try ChildProcess(["mosquitto_sub", "-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "cam/available", "-C", "1", "-W", "10"])
        #expect(late.finish().output == "offline\n")
        broker.stop()
    }

    @Test func commandsTakePhotosAndStartAndStopRecordingsAndAreAnswered() async throws {
        let directory = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: directory.path)
        try broker.start()
        let (subscriber, output) = try broker.subscribe("cam/#")
        #expect(try await waitUntilSubscribed(broker, output, prefix: "cam"))
        // A retained command, there before the client subscribes, is never performed (it would run
        // again at every connect).
        try broker.publish("cam/command", "capture-photo, output=photo", retain: true)
        let runner = ScenarioRunner(
            document: try parsed(Self.camera, file: "commands.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(60), outputDirectory: directory.path))
        let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam")
        publisher.start()
        publisher.performCommands(reading: .pipelineAction(document: runner.document), with: { runner.controller })
        let run = Task { await runner.run { event in publisher.publish(name: event.name, json: event.jsonLine) } }
        #expect(await output.wait { $0.contains { $0.hasPrefix("cam/session-started ") } })
        #expect(await output.wait { $0.contains("cam/available online") })
        func command(_ text: String, replies: Int) async throws -> Bool {
            try broker.publish("cam/command", text)
            return await output.wait { $0.filter { $0.hasPrefix("cam/reply ") }.count >= replies }
        }
        #expect(try await command("capture-photo, output=photo", replies: 1))
        #expect(try await command("start-recording, output=movie", replies: 2))
        #expect(await output.wait { $0.contains { $0.hasPrefix("cam/recording-started ") } })
        #expect(try await command("capture-photo, output=nope", replies: 3))
        #expect(try await command("stop-recording, output=movie", replies: 4))
        #expect(await output.wait { $0.contains { $0.hasPrefix("cam/recording-finished ") } })
        #expect(try await command("stop-recording, output=movie", replies: 5))
        runner.requestStop()
        let result = await run.value
        await publisher.stop()
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()

        let replies = output.lines.filter { $0.hasPrefix("cam/reply ") }
        // Numbered in order of arrival; what a command made comes back by name in the output folder.
        #expect(
            Array(replies.prefix(3)) == [
                #"cam/reply {"seq": 1, "command": "capture-photo, output=photo", "ok": true, "taken": 1, "photos": ["photo-1.jpg"]}"#,
                #"cam/reply {"seq": 2, "command": "start-recording, output=movie", "ok": true, "output": "movie", "location": "movie.mp4"}"#,
                #"cam/reply {"seq": 3, "command": "capture-photo, output=nope", "ok": false, "error": "invalid-command", "message": "no output named 'nope'; outputs: movie, photo"}"#,
            ])
        #expect(replies.count == 5)
        #expect(
            replies.dropFirst(3).first?.hasPrefix(
                #"cam/reply {"seq": 4, "command": "stop-recording, output=movie", "ok": true, "output": "movie", "location": "movie.mp4", "duration": "#)
                == true)
        #expect(replies.last?.hasPrefix(#"cam/reply {"seq": 5, "command": "stop-recording, output=movie", "ok": false, "error": "not-recording""#) == true)
        #expect(result.events.filter { $0.name == "photo-saved" }.count == 1)
        // The photo and the movie, read by independent tools.
        #expect(FileManager.default.fileExists(atPath: directory.path("photo-1.jpg")))
        let probe = try ChildProcess([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", directory.path("movie.mp4"),
        ])
        #expect(probe.finish().output.trimmingCharacters(in: .whitespacesAndNewlines) == "h264")
        broker.stop()
    }

    /// Two publishers of one process are two clients of the broker (each its own client id: a broker
    /// closes the older of two connections with one id).
    @Test func twoPublishersOfOneProcessBothDeliver() async throws {
        let directory = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: directory.path)
        try broker.start()
        let (subscriber, output) = try broker.subscribe("two/#")
        #expect(try await waitUntilSubscribed(broker, output, prefix: "two"))
        let first = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/two/a")
        let second = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/two/b")
        first.start()
        second.start()
        #expect(await output.wait { $0.contains("two/a/available online") && $0.contains("two/b/available online") })
        for index in 0..<5 {
            for (publisher, event) in [(first, RunnerEvent(.notice("a\(index)"), time: 0)), (second, RunnerEvent(.notice("b\(index)"), time: 0))] {
                publisher.publish(name: event.name, json: event.jsonLine)
            }
        }
        await first.stop()
        await second.stop()
        #expect(await output.wait { $0.filter { $0.hasPrefix("two/a/notice ") || $0.hasPrefix("two/b/notice ") }.count == 10 })
        // Each went online once: neither was pushed off by the other.
        #expect(output.lines.filter { $0 == "two/a/available online" }.count == 1)
        #expect(output.lines.filter { $0 == "two/b/available online" }.count == 1)
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()
        broker.stop()
    }

    /// The broker is down when the run starts and comes later: the run goes on, and the events it had
    /// meanwhile are delivered once it is there (queued), in order.
    @Test func aBrokerDownAtStartDoesNotStopTheSession() async throws {
        let directory = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: directory.path)
        // A persistent subscriber session, kept by the broker across its restart.
        try broker.start()
        var (subscriber, output) = try broker.subscribe("cam/#", clientID: "capture-test-sub")
        #expect(try await waitUntilSubscribed(broker, output, prefix: "cam"))
        subscriber.signal(SIGKILL)
        _ = subscriber.wait()
        broker.stop(SIGTERM)

        let text =
            Self.camera + """
                start
                wait, event=session-started
                capture-photo, output=photo
                wait, event=photo-saved
                wait, duration=3
                capture-photo, output=photo
                wait, event=photo-saved, count=2
                """
        let runner = ScenarioRunner(
            document: try parsed(text, file: "scenario.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let statuses = Locked<[MQTTStatus]>([])
        let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam") { status in statuses.withLock { $0.append(status) } }
        publisher.start()
        let firstPhoto = Locked(false)
        let run = Task {
            await runner.run { event in
                publisher.publish(name: event.name, json: event.jsonLine)
                if event.name == "photo-saved" { firstPhoto.value = true }
            }
        }
        // The broker comes once the first photo is saved (its events wait in the queue).
        #expect(await waitUntil { firstPhoto.value })
        #expect(!publisher.isConnected)
        try broker.start()
        (subscriber, output) = try broker.subscribe("cam/#", clientID: "capture-test-sub")
        let result = await run.value
        await publisher.stop()
        #expect(result.exitCode == 0)
        #expect(await output.wait { $0.contains("cam/available offline") })
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()
        #expect(statuses.value.contains { if case .disconnected = $0 { true } else { false } })
        #expect(statuses.value.contains { if case .connected = $0 { true } else { false } })
        let received = eventMessages(output.lines, prefix: "cam")
        #expect(received.map(\.payload) == result.events.map(\.jsonLine))
        broker.stop()
    }

    /// The broker goes away mid-run (SIGKILL) and comes back: the session goes on (a photo is taken
    /// meanwhile), the client reconnects, and the events of the absence arrive afterwards.
    @Test func aBrokerKilledMidRunDoesNotStopTheSession() async throws {
        let directory = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: directory.path)
        try broker.start()
        var (subscriber, output) = try broker.subscribe("cam/#", clientID: "capture-test-sub")
        #expect(try await waitUntilSubscribed(broker, output, prefix: "cam"))
        let runner = ScenarioRunner(
            document: try parsed(Self.camera, file: "commands.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(60), outputDirectory: directory.path))
        let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam")
        publisher.start()
        let run = Task { await runner.run { event in publisher.publish(name: event.name, json: event.jsonLine) } }
        #expect(await output.wait { $0.contains { $0.hasPrefix("cam/session-started ") } })
        // Its session persisted (autosave each second: the database is written after the subscription),
        // the broker dies without a word.
        let database = directory.path("mosquitto.db")
        let subscribed = Date()
        #expect(
            await waitUntil {
                ((try? FileManager.default.attributesOfItem(atPath: database))?[.modificationDate] as? Date).map { $0 > subscribed } ?? false
            })
        broker.stop(SIGKILL)
        subscriber.signal(SIGKILL)
        _ = subscriber.wait()
        _ = try await runner.interact(try PipelineDocument.action(parsing: "capture-photo, output=photo", in: try #require(runner.session)))
        _ = await waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: directory.path("photo-1.jpg")) }
        #expect(runner.session?.isRunning == true)
        try broker.start()
        (subscriber, output) = try broker.subscribe("cam/#", clientID: "capture-test-sub")
        #expect(await output.wait(timeout: .seconds(60)) { $0.contains { $0.hasPrefix("cam/photo-saved ") } })
        runner.requestStop()
        let result = await run.value
        await publisher.stop()
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()
        #expect(result.exitCode == 0)
        #expect(!result.events.contains { $0.name == "runtime-error" })
        broker.stop()
    }
}
