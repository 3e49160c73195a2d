import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import CaptureMQTT
@testable import PipelineFile

/// Commands over a real broker (Debian's mosquitto on 127.0.0.1) as an attacker with publish rights
/// would send them: files outside the output folder, names the file did not declare, bursts, huge
/// payloads. Read back with mosquitto_sub.
@Suite("MQTT commands are a remote caller's", .serialized)
struct MQTTRemoteTests {
    static let camera = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern, pattern=ball
        output, name=photo, kind=photo, location="photo-%d.jpg"
        output, name=movie, kind=movie, location="movie.mp4"

        """

    /// A broker, a subscriber on `cam/#`, a run of `camera` writing into `root/a/b`, its commands
    /// answered; and a second client that publishes commands in a burst.
    final class Rig: @unchecked Sendable {
        // @unchecked: set once in init; torn down once in stop().
        let root: TemporaryDirectory
        let broker: MosquittoBroker
        let subscriber: ChildProcess
        let output: OutputCollector
        let runner: ScenarioRunner
        let publisher: MQTTEventPublisher
        let sender: MQTTEventPublisher
        let run: Task<ScenarioResult, Never>
        var folder: String { root.path("a/b") }

        /// `album`: remote callers may also read the album in `root/album/Pictures` and `root/album/Videos`.
        init(remoteAccess: RemoteAccess = .outputFolderOnly, album: Bool = false) async throws {
            root = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: root.path("a/b"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root.path("private"), withIntermediateDirectories: true)
            var remoteAccess = remoteAccess
            if album {
                for folder in ["album/Pictures", "album/Videos"] {
                    try FileManager.default.createDirectory(atPath: root.path(folder), withIntermediateDirectories: true)
                }
                remoteAccess.album = MediaLibrary(picturesFolder: root.path("album/Pictures"), videosFolder: root.path("album/Videos"))
            }
            broker = try MosquittoBroker(port: freeLoopbackPort(), directory: root.path)
            try broker.start()
            (subscriber, output) = try broker.subscribe("cam/#")
            let deadline = ContinuousClock.now + .seconds(20)
            while !output.lines.contains(where: { $0.hasPrefix("cam/probe") }) && ContinuousClock.now < deadline {
                try broker.publish("cam/probe", "x")
                _ = await output.wait(timeout: .milliseconds(500)) { $0.contains { $0.hasPrefix("cam/probe") } }
            }
            runner = ScenarioRunner(
                document: try parsed(MQTTRemoteTests.camera, file: "remote.pipeline"),
                options: ScenarioRunner.Options(durationLimit: .seconds(120), outputDirectory: root.path("a/b"), remoteAccess: remoteAccess))
            publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam")
            publisher.start()
            let commandRunner = self.runner
            publisher.performCommands(reading: .pipelineAction(document: commandRunner.document), with: { commandRunner.controller })
            // Publishes on cam/command through its `publish(name: "command", ...)`, in order, QoS 1.
            sender = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/cam", options: MQTTOptions(clientID: "capture-test-sender"))
            sender.start()
            let runner = self.runner, publisher = self.publisher
            run = Task { await runner.run { event in publisher.publish(name: event.name, json: event.jsonLine) } }
            _ = await output.wait(timeout: .seconds(30)) { $0.contains { $0.hasPrefix("cam/session-started ") } }
        }

        var replies: [String] { output.lines.filter { $0.hasPrefix("cam/reply ") }.map { String($0.dropFirst("cam/reply ".count)) } }

        /// Sends `text` and waits for its reply (the `count`-th).
        func send(_ text: String) async throws -> String {
            let before = replies.count
            try broker.publish("cam/command", text)
            _ = await output.wait(timeout: .seconds(30)) { $0.filter { $0.hasPrefix("cam/reply ") }.count > before }
            return replies.count > before ? replies[before] : "no reply"
        }

        func stop() async -> ScenarioResult {
            runner.requestStop()
            let result = await run.value
            await publisher.stop()
            await sender.stop()
            subscriber.signal(SIGTERM)
            _ = subscriber.wait()
            broker.stop()
            return result
        }
    }

    static func field(_ name: String, of reply: String) -> Any? {
        (try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])?[name]
    }

    @Test func commandsNameOnlyTheOutputFolder() async throws {
        let rig = try await Rig()
        let outside = rig.root.path("private")
        let secret = outside + "/secret.mp4"
        _ = FileManager.default.createFile(atPath: secret, contents: Data(repeating: 1, count: 64))
        try FileManager.default.createSymbolicLink(atPath: rig.folder + "/away", withDestinationPath: outside)
        for hostile in [
            #"capture-photo, output=photo, location="\#(outside)/x.jpg""#,
            #"capture-photo, output=photo, location="../../x.jpg""#,
            #"capture-photo, output=photo, location="away/x.jpg""#,
            #"start-recording, output=movie, location="\#(outside)/x.mp4""#,
            #"trim-video, input="\#(secret)", from=0, to=2, location="leak.mp4""#,
            #"trim-video, input="../../private/secret.mp4", from=0, to=2, location="leak.mp4""#,
            #"generate-thumbnail, input="\#(secret)", at=1, location="leak.png""#,
            #"add-output, name=p2, kind=photo, location="\#(outside)/p-%d.jpg""#,
            #"add-overlay, name=logo, output=photo, image="\#(outside)/logo.png""#,
            #"add-input, name=f, device="file:\#(secret)""#,
            #"add-output, name=s, kind=stream, serve="rtsp://127.0.0.1:\#(freeLoopbackPort())/s""#,
        ] {
            let reply = try await rig.send(hostile)
            #expect(Self.field("error", of: reply) as? String == "not-permitted", "\(hostile) -> \(reply)")
            // A refusal names the file as the caller may know it, never the session's folder.
            let message = Self.field("message", of: reply) as? String ?? ""
            #expect(!message.contains(rig.folder), "the reply tells where the output folder is: \(message)")
        }
        // The session is as it was, nothing is outside, and the camera still answers.
        let photo = try await rig.send("capture-photo, output=photo")
        #expect(Self.field("photos", of: photo) as? [String] == ["photo-1.jpg"], "\(photo)")
        let result = await rig.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["secret.mp4"])
        #expect(!FileManager.default.fileExists(atPath: rig.root.path("x.jpg")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.folder).sorted() == ["away", "photo-1.jpg"])
        // Each refusal the controller made is an event too; the file: input is refused while it is
        // built, before it reaches the controller (its reply says so, no event).
        #expect(result.events.filter { $0.name == "action-failed" }.count == 10)
    }

    /// Every recording command answers with the recording: its output, its file in the output folder,
    /// and what it holds (a pause and a resume too, not a bare ok).
    @Test func recordingCommandsAnswerWithTheRecording() async throws {
        let rig = try await Rig()
        var replies: [String] = []
        for command in ["start-recording, output=movie", "pause-recording, output=movie", "resume-recording, output=movie", "stop-recording, output=movie"] {
            let reply = try await rig.send(command)
            #expect(Self.field("ok", of: reply) as? Bool == true, "\(command) -> \(reply)")
            #expect(Self.field("output", of: reply) as? String == "movie", "\(command) -> \(reply)")
            #expect(Self.field("location", of: reply) as? String == "movie.mp4", "\(command) -> \(reply)")
            replies.append(reply)
        }
        for reply in replies.dropFirst() { #expect(Self.field("duration", of: reply) is Double, "\(reply)") }
        _ = await rig.stop()
    }

    /// A pick over MQTT is what the next command's `picked=` reads, as in a file; a link in the album
    /// to a file outside it is not offered to a remote caller.
    @Test func aPickIsReadByTheNextCommandAndStaysInTheAlbum() async throws {
        let rig = try await Rig(album: true)
        let album = rig.root.path("album/Videos")
        // A video in the album: a recording of the session (a few frames), copied there.
        for command in ["start-recording, output=movie", "stop-recording, output=movie"] {
            #expect(Self.field("ok", of: try await rig.send(command)) as? Bool == true, "\(command)")
        }
        try FileManager.default.copyItem(atPath: rig.folder + "/movie.mp4", toPath: album + "/clip.mp4")
        let secret = rig.root.path("private") + "/private.mp4"
        try FileManager.default.copyItem(atPath: rig.folder + "/movie.mp4", toPath: secret)
        try FileManager.default.createSymbolicLink(atPath: album + "/link.mp4", withDestinationPath: secret)

        let picked = try await rig.send("pick-from-library, name=clip, kind=video")
        #expect(Self.field("location", of: picked) as? String == "album-videos/clip.mp4", "\(picked)")
        let trimmed = try await rig.send("trim-video, picked=clip, from=0, to=0.05, location=trimmed.mp4")
        #expect(Self.field("ok", of: trimmed) as? Bool == true, "\(trimmed)")
        #expect(FileManager.default.fileExists(atPath: rig.folder + "/trimmed.mp4"))
        let thumbnail = try await rig.send("generate-thumbnail, picked=clip, at=0, location=clip.jpg")
        #expect(Self.field("ok", of: thumbnail) as? Bool == true, "\(thumbnail)")
        // The link's target is outside the album: not there for a remote caller.
        let link = try await rig.send("pick-from-library, name=away, file=link.mp4")
        #expect(Self.field("error", of: link) as? String == "library-item-not-found", "\(link)")
        let unknown = try await rig.send("trim-video, picked=away, from=0, to=0.05, location=leak.mp4")
        #expect(Self.field("error", of: unknown) as? String == "invalid-command", "\(unknown)")
        _ = await rig.stop()
    }

    @Test func theCheckerReadsTheLiveSession() async throws {
        let port = freeLoopbackPort()
        let allowed = "rtsp://127.0.0.1:\(port)/s"
        let rig = try await Rig(remoteAccess: RemoteAccess(streamURLs: [try StreamURL(allowed)]))
        #expect(Self.field("ok", of: try await rig.send("remove-output, name=photo")) as? Bool == true)
        // The shutter comes back: the name the file declared is free again.
        let added = try await rig.send("add-output, name=photo, kind=photo")
        #expect(Self.field("ok", of: added) as? Bool == true, "\(added)")
        #expect(Self.field("ok", of: try await rig.send("capture-photo, output=photo")) as? Bool == true)
        // A stream a command added can be removed by the next one.
        let stream = try await rig.send(#"add-output, name=s, kind=stream, serve="\#(allowed)""#)
        #expect(Self.field("ok", of: stream) as? Bool == true, "\(stream)")
        let removed = try await rig.send("remove-output, name=s")
        #expect(Self.field("ok", of: removed) as? Bool == true, "\(removed)")
        _ = await rig.stop()
    }

    /// The first command is held until every command of the burst has arrived, so the backlog is full
    /// however fast the machine is: 1 performed, 32 waiting, the rest `busy`, and every reply in order.
    @Test func busyRepliesWaitTheirTurn() async throws {
        let root = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: root.path)
        try broker.start()
        let (subscriber, output) = try broker.subscribe("gate/#")
        let deadline = ContinuousClock.now + .seconds(20)
        while !output.lines.contains(where: { $0.hasPrefix("gate/probe") }) && ContinuousClock.now < deadline {
            try broker.publish("gate/probe", "x")
            _ = await output.wait(timeout: .milliseconds(500)) { $0.contains { $0.hasPrefix("gate/probe") } }
        }
        let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/gate")
        let sender = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/gate", options: MQTTOptions(clientID: "capture-test-gate"))
        publisher.start()
        sender.start()
        let (opened, gate) = AsyncStream<Void>.makeStream()
        publisher.performCommands { text async -> MQTTReply in
            if text == "first" { for await _ in opened { break } }
            return .success([("text", .string(text))])
        }
        // Commands are taken once the publisher has subscribed: a probe answered says it has.
        var probes = 0
        while !output.lines.contains(where: { $0.hasPrefix("gate/reply ") }) && probes < 40 {
            sender.publish(name: "command", json: "probe")
            probes += 1
            _ = await output.wait(timeout: .milliseconds(500)) { $0.contains { $0.hasPrefix("gate/reply ") } }
        }
        // Probes sent before the subscription are lost; those that arrived were all answered.
        let base = publisher.queue.arrivedCount
        #expect(base >= 1)
        #expect(await output.wait(timeout: .seconds(10)) { $0.filter { $0.hasPrefix("gate/reply ") }.count == base })
        let burst = 40
        sender.publish(name: "command", json: "first")
        for index in 1..<burst { sender.publish(name: "command", json: "c\(index)") }
        #expect(await publisher.queue.waitForArrivals(base + burst, timeout: .seconds(20)))
        gate.yield()
        #expect(await output.wait(timeout: .seconds(30)) { $0.filter { $0.hasPrefix("gate/reply ") }.count >= base + burst })
        let replies = output.lines.filter { $0.hasPrefix("gate/reply ") }.map { String($0.dropFirst("gate/reply ".count)) }.dropFirst(base)
        #expect(replies.compactMap { Self.field("seq", of: $0) as? Int } == Array((base + 1)...(base + burst)))
        let errors = replies.map { Self.field("error", of: $0) as? String }
        #expect(errors.prefix(1 + MQTTEventPublisher.commandBacklog).allSatisfy { $0 == nil })
        #expect(errors.dropFirst(1 + MQTTEventPublisher.commandBacklog).allSatisfy { $0 == "busy" })
        #expect(errors.filter { $0 == "busy" }.count == burst - 1 - MQTTEventPublisher.commandBacklog)
        await publisher.stop()
        await sender.stop()
        subscriber.signal(SIGTERM)
        _ = subscriber.wait()
        broker.stop()
    }

    /// Commands run on a thread of their own: two clients whose commands block (as a media probe or a
    /// slow disk would) leave the cooperative pool (two threads here) free for everything else.
    @Test func aBlockingCommandHoldsNoThreadOfThePool() async throws {
        let root = try TemporaryDirectory()
        let broker = try MosquittoBroker(port: freeLoopbackPort(), directory: root.path)
        try broker.start()
        let release = DispatchSemaphore(value: 0)
        let entered = Locked(0)
        // Each client publishes `available` (retained) right after its SUBSCRIBE, on the same connection,
        // which the broker reads in order: once both are seen, both clients are subscribed.
        let (watcher, availability) = try broker.subscribe("+/available")
        var publishers: [MQTTEventPublisher] = []
        for index in 0..<2 {
            let publisher = try MQTTEventPublisher(url: "mqtt://127.0.0.1:\(broker.port)/block\(index)")
            publisher.start()
            publisher.performCommands { _ async -> MQTTReply in
                entered.withLock { $0 += 1 }
                release.wait()
                return .success
            }
            publishers.append(publisher)
        }
        let subscribed = await availability.wait(timeout: .seconds(30)) { lines in
            (0..<2).allSatisfy { index in lines.contains("block\(index)/available online") }
        }
        #expect(subscribed, "\(availability.lines)")
        watcher.signal(SIGTERM)
        _ = await watcher.ended()
        // A watchdog off the pool lets the handlers go after 20 s, so a regression (the pool's threads
        // held by the handlers) fails instead of hanging.
        let answered = Locked(false), fired = Locked(false)
        let watchdog = Thread {
            let until = Date().addingTimeInterval(20)
            // Paces the watchdog's reads of the flag (a blocked pool cannot deliver an event to it);
            // the hang bound of the test, nothing is counted after it.
            while !answered.value && Date() < until { usleep(10_000) }
            if !answered.value { fired.value = true }
            for _ in 0..<200 { release.signal() }
        }
        watchdog.start()
        // One command each, then until both are inside their handlers.
        for index in 0..<2 { try broker.publish("block\(index)/command", "stop") }
        _ = await waitUntil(timeout: .seconds(15)) { entered.value >= 2 }
        #expect(entered.value >= 2)
        // With both handlers blocked, work on the pool still runs.
        let value = await Task.detached { 42 }.value
        answered.value = true
        #expect(value == 42)
        #expect(!fired.value, "the pool was held until the watchdog let the handlers go")
        for _ in 0..<200 { release.signal() }
        for publisher in publishers { await publisher.stop(timeout: .seconds(2)) }
        broker.stop()
    }

    @Test func repliesComeInOrderNumberedWithTheCallersId() async throws {
        let rig = try await Rig()
        // A burst: more than the backlog of slow commands, sent by one client in order (QoS 1).
        let burst = 60
        for index in 0..<burst {
            rig.sender.publish(name: "command", json: #"{"id": "b\#(index)", "command": "capture-photo, output=photo"}"#)
        }
        #expect(await rig.output.wait(timeout: .seconds(120)) { $0.filter { $0.hasPrefix("cam/reply ") }.count >= burst })
        let replies = rig.replies
        #expect(replies.compactMap { Self.field("seq", of: $0) as? Int } == Array(1...burst))
        #expect(replies.compactMap { Self.field("id", of: $0) as? String } == (0..<burst).map { "b\($0)" })
        let busy = replies.filter { Self.field("error", of: $0) as? String == "busy" }.count
        let taken = replies.filter { Self.field("ok", of: $0) as? Bool == true }.count
        #expect(taken + busy == burst)
        // A 10 MB command is refused without being echoed.
        rig.sender.publish(name: "command", json: String(repeating: "a", count: 10 << 20))
        #expect(await rig.output.wait(timeout: .seconds(60)) { $0.filter { $0.hasPrefix("cam/reply ") }.count > burst })
        let huge = try #require(rig.replies.last)
        #expect(huge.utf8.count < 1024)
        #expect(Self.field("error", of: huge) as? String == "invalid-command")
        #expect(Self.field("seq", of: huge) as? Int == burst + 1)
        let result = await rig.stop()
        #expect(result.events.filter { $0.name == "photo-saved" }.count == taken)
    }
}
