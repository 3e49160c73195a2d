import Capture
import CaptureControl
import Foundation
import Testing

/// The controller's rules on a session that is not running: nothing is started, no pipeline is
/// built, so each answer is the controller's and the session's bookkeeping alone.
@Suite("The session controller")
struct SessionControllerTests {
    func controller(_ scratch: Scratch, remote: RemoteAccess = .outputFolderOnly) throws -> SessionController {
        let session = CaptureSession(name: "control-test")
        try session.addInput(CaptureDeviceInput(device: try CaptureDevice.resolve("test-pattern"), name: "camera"))
        try session.addOutput(CapturePhotoOutput(name: "photo"))
        return SessionController(
            session: session, folders: SessionFolders(outputFolder: scratch.output, remote: remote),
            videoMode: SessionController.VideoMode(movieName: "movie", movieLocation: "VID_%04d.mp4"))
    }

    func refusal(_ controller: SessionController, _ command: ControlCommand, as caller: ControlCaller = .remote) async -> String? {
        do throws(CaptureError) {
            _ = try await controller.perform(command, as: caller)
            return nil
        } catch {
            return error.name
        }
    }

    @Test func remoteOutputsThatWriteOrStreamElsewhereAreRefusedAndNotAdded() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let allowed = try StreamURL("rtsp://127.0.0.1:8554/allowed")
        let controller = try controller(scratch, remote: RemoteAccess(streamURLs: [allowed]))
        let photo = CapturePhotoOutput(name: "p2")
        photo.defaults.location = "/tmp/elsewhere/x.jpg"
        var settings = MovieSettings()
        settings.location = scratch.output + "/../x.mp4"
        let movie = CaptureMovieFileOutput(name: "m2", settings: settings)
        let stream = CaptureStreamOutput(name: "s", destination: try .serving("rtsp://127.0.0.1:8554/other"))
        let sequence = CaptureImageSequenceOutput(name: "frames", location: scratch.output + "/away/f-%d.jpg")
        for output in [photo, movie, stream, sequence] as [CaptureOutput] {
            #expect(await refusal(controller, .addOutput(output)) == "not-permitted", "\(output.name)")
            #expect(controller.session.output(named: output.name) == nil)
        }
        // The same outputs are a local caller's to add; the allowed stream is a remote one's.
        #expect(await refusal(controller, .addOutput(CaptureStreamOutput(name: "ok", destination: try .serving(allowed.description)))) == nil)
        #expect(await refusal(controller, .addOutput(photo), as: .local) == nil)
        #expect(controller.session.output(named: "p2") != nil)
    }

    @Test func remoteEditsReadOnlyTheFolder() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let controller = try controller(scratch)
        let reads: [ControlCommand] = [
            .trim(VideoTrimRequest(source: .file(scratch.outside + "/private.mp4"), from: 0, to: 1, location: "leak.mp4")),
            .trim(VideoTrimRequest(source: .file("../elsewhere/private.mp4"), from: 0, to: 1, location: "leak2.mp4")),
            .thumbnail(VideoThumbnailRequest(source: .file("leak.mp4"), location: "t.png")),
            .thumbnail(VideoThumbnailRequest(source: .file("clip.mp4"), location: "../t.png")),
            .trim(VideoTrimRequest(source: .file("fifo.mp4"), from: 0, to: 1, location: "x.mp4")),
            .addOverlay(CaptureOverlay(name: "logo", content: .image(path: "/etc/hostname")), outputs: ["photo"]),
            .takePhoto(PhotoRequest(location: "/tmp/x.jpg")),
            .startRecording(output: nil, location: "../x.mp4"),
        ]
        for command in reads { #expect(await refusal(controller, command) == "not-permitted", "\(command.name)") }
        #expect(!FileManager.default.fileExists(atPath: scratch.output + "/leak.mp4.part"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.outside) == ["private.mp4"])
        #expect(controller.session.outputs.allSatisfy { $0.overlays.isEmpty })
    }

    @Test func modeSwitchAddsAndRemovesTheMovieOutput() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let controller = try controller(scratch)
        #expect(controller.mode == .photo)
        guard case .mode(.video) = try await controller.perform(.switchMode(.video), as: .remote) else { Issue.record("not video"); return }
        let movie = try #require(controller.session.output(named: "movie") as? CaptureMovieFileOutput)
        #expect(movie.settings.location == scratch.output + "/VID_%04d.mp4")
        guard case .mode(.video) = try await controller.perform(.switchMode(.video)) else { Issue.record("not video"); return }
        guard case .mode(.photo) = try await controller.perform(.switchMode(.photo)) else { Issue.record("not photo"); return }
        #expect(controller.session.output(named: "movie") == nil)
    }

    @Test func theFlashButtonCyclesAndOverlayTextsFollowIt() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let controller = try controller(scratch)
        let overlay = CaptureOverlay(name: "state", content: .text("Flash {flash-mode}"))
        try await controller.perform(.addOverlay(overlay, outputs: ["photo"]), as: .remote)
        func shown() -> String? {
            guard case .text(let text, _)? = controller.session.output(named: "photo")?.overlays.first?.content else { return nil }
            return text
        }
        let first = try #require(shown())
        var seen: [String] = []
        for _ in 0..<3 {
            guard case .flashMode(let mode) = try await controller.perform(.toggleFlash(output: nil)) else { Issue.record("no mode"); return }
            seen.append(mode.rawValue)
            #expect(shown() == "Flash \(mode.rawValue.capitalized)")
        }
        #expect(Set(seen).count == seen.count || seen.count == 3)
        #expect(first.hasPrefix("Flash "))
        // A change that leaves the text alone keeps it following; one that writes a new text without
        // placeholders stops it.
        try await controller.perform(
            .updateOverlay(
                name: "state", outputs: [],
                change: { overlay in
                    var moved = overlay
                    moved.opacity = 0.5
                    return moved
                }))
        let before = shown()
        try await controller.perform(.toggleFlash(output: nil))
        #expect(shown() != before)
        try await controller.perform(
            .updateOverlay(
                name: "state", outputs: [],
                change: { overlay in
                    var fixed = overlay
                    fixed.content = .text("fixed")
                    return fixed
                }))
        try await controller.perform(.toggleFlash(output: nil))
        #expect(shown() == "fixed")
    }

    /// Each output, input or overlay costs work on every frame: a remote caller cannot add them
    /// without bound (a local one can).
    @Test func remoteCallersCannotGrowTheSessionWithoutBound() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let controller = try controller(scratch, remote: RemoteAccess(maximumInputs: 1, maximumOutputs: 3, maximumOverlaysPerOutput: 2))
        #expect(await refusal(controller, .addOutput(CapturePhotoOutput(name: "p2"))) == nil)
        #expect(await refusal(controller, .addOutput(CapturePhotoOutput(name: "p3"))) == nil)
        #expect(await refusal(controller, .addOutput(CapturePhotoOutput(name: "p4"))) == "not-permitted")
        #expect(controller.session.outputs.count == 3)
        #expect(await refusal(controller, .addOutput(CapturePhotoOutput(name: "p4")), as: .local) == nil)
        let tone = try CaptureDeviceInput(device: try CaptureDevice.resolve("test-tone"), name: "mic")
        #expect(await refusal(controller, .addInput(tone)) == "not-permitted")
        for index in 0..<2 {
            #expect(await refusal(controller, .addOverlay(CaptureOverlay(name: "t\(index)", content: .text("x")), outputs: ["photo"])) == nil)
        }
        #expect(await refusal(controller, .addOverlay(CaptureOverlay(name: "t2", content: .text("x")), outputs: ["photo"])) == "not-permitted")
        #expect(controller.session.output(named: "photo")?.overlays.count == 2)
    }

    @Test func namesAreTheLiveSessions() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let controller = try controller(scratch)
        try await controller.perform(.removeOutput(name: "photo"), as: .remote)
        try await controller.perform(.addOutput(CapturePhotoOutput(name: "photo")), as: .remote)
        #expect(controller.photoOutput?.name == "photo")
        #expect(await refusal(controller, .removeOutput(name: "nope")) == "unknown-output")
        #expect(await refusal(controller, .stopRecording(output: nil)) == "invalid-configuration")
        #expect(
            await refusal(controller, .trim(VideoTrimRequest(source: .lastRecording(output: "movie"), from: 0, to: 1, location: "t.mp4"))) == "no-recording-yet"
        )
    }

    @Test func everyOutcomeIsObserved() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let heard = Locked<[String]>([])
        let session = CaptureSession(name: "observed")
        let controller = SessionController(session: session, folders: SessionFolders(outputFolder: scratch.output)) { outcome in
            let text: String
            switch outcome.result {
            case .success: text = "\(outcome.command.name) ok \(outcome.caller.rawValue)"
            case .failure(let error): text = "\(outcome.command.name) \(error.name) \(outcome.caller.rawValue)"
            }
            heard.withLock { $0.append(text) }
        }
        _ = try? await controller.perform(.toggleFlash(output: nil), as: .remote)
        _ = try? await controller.perform(.setPreset(.vga640x480))
        #expect(heard.value == ["toggle-flash invalid-configuration remote", "set-preset ok local"])
    }
}
