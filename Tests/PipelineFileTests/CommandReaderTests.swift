import Capture
import Foundation
import Testing

@testable import CaptureMQTT
@testable import PipelineFile

/// The `.pipeline` reader of remote commands, on a session that is not running: what it makes of a
/// text against the live session, and what it refuses before anything is opened.
@Suite struct CommandReaderTests {
    static let document = """
        session
        input, name=camera, device=test-pattern
        output, name=photo, kind=photo, location="shot.jpg"
        """

    func controller(_ folder: String) throws -> SessionController {
        let session = CaptureSession(name: "reader-test")
        try session.addInput(CaptureDeviceInput(device: try CaptureDevice.resolve("test-pattern"), name: "camera"))
        try session.addOutput(CapturePhotoOutput(name: "photo"))
        return SessionController(session: session, folders: SessionFolders(outputFolder: folder, remote: .outputFolderOnly))
    }

    func failure(
        _ reader: ControlCommandReader, _ text: String, _ controller: SessionController, as caller: ControlCaller = .remote
    ) -> ControlCommandReader.Failure? {
        do throws(ControlCommandReader.Failure) {
            _ = try reader.command(from: text, for: controller, as: caller)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRemoteTextBecomesACommandOrATypedRefusal() async throws {
        let root = try TemporaryDirectory()
        let controller = try controller(root.path)
        let reader = ControlCommandReader.pipelineAction(document: try parsed(Self.document))
        guard case .takePhoto(let request) = try reader.command(from: "capture-photo, output=photo", for: controller, as: .remote) else {
            Issue.record("capture-photo is not a photo command")
            return
        }
        #expect(request.output == "photo")
        // Not a command of the format: invalid, with the checker's words.
        #expect(failure(reader, "wait, duration=1", controller)?.name == "invalid-command")
        #expect(failure(reader, "capture-photo, output=nothing", controller)?.name == "invalid-command")
        #expect(failure(reader, String(repeating: "x", count: 5000), controller) == .invalid("the command has 5000 bytes; a command may have at most 4096"))
        // A remote caller's file outside the output folder: the command is read, and the controller
        // refuses it before anything is added (the policy is the controller's, for every surface).
        let elsewhere = try reader.command(from: #"add-output, name=elsewhere, kind=photo, location="/tmp/elsewhere.jpg""#, for: controller, as: .remote)
        do throws(CaptureError) {
            _ = try await controller.perform(elsewhere, as: .remote)
            Issue.record("a remote output writing to /tmp was added")
        } catch {
            #expect(error.name == "not-permitted", "\(error)")
        }
        #expect(controller.session.outputs.map(\.name) == ["photo"], "nothing was added")
    }

    /// MQTT's transport limit is the reader's: a command the format takes is never cut by the client.
    @Test func theMQTTLimitIsTheFormatsLimit() throws {
        #expect(MQTTCommand.maximumStatementBytes == PipelineDocument.maximumCommandBytes)
        #expect(ControlCommandReader.pipelineAction(document: try parsed(Self.document)).maximumBytes == PipelineDocument.maximumCommandBytes)
    }
}
