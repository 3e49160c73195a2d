import Capture
import CaptureControl
import Foundation

/// One action given as text from outside a file (an MQTT command, a line typed at a prompt), read by the
/// same checker as a `.pipeline` statement and never anything else: the text is split, read and checked
/// as one statement against the live session's inputs and outputs (not a file's declarations), and the
/// result is an `Action` value.
extension PipelineDocument {
    /// The longest command text taken, in bytes.
    public static let maximumCommandBytes = 4096

    /// The statements a command may be: the actions a `SessionController` performs (not `wait`,
    /// `expect`, `repeat` or a configuration block, which belong to a scenario).
    public static let commandStatements = Vocabulary.actions.filter {
        !["wait", "expect", "repeat", "begin-configuration", "commit-configuration"].contains($0)
    }

    /// Reads `text` as one action statement (`capture-photo, output=photo`) for a running session: its
    /// names must be the session's inputs and outputs as they are now (an output a command added can be
    /// removed by the next; a name removed can be added again), its keys those of the action, and its
    /// `picked=` names among `picks` (what earlier commands picked from the album, with the kind).
    /// Typed error: the diagnostics, as for a file (`file` names the source in them).
    public static func action(
        parsing text: String, in session: CaptureSession, picks: [String: MediaLibrary.MediaKind] = [:], file: String = "<command>"
    ) throws(PipelineDiagnostics) -> Action {
        func refuse(_ message: String) -> PipelineDiagnostics {
            PipelineDiagnostics([Diagnostic(location: SourceLocation(file: file, line: 1, column: 1), message: message, sourceLine: "")])
        }
        guard text.utf8.count <= Self.maximumCommandBytes else {
            throw refuse("the command has \(text.utf8.count) bytes; a command may have at most \(Self.maximumCommandBytes)")
        }
        guard !text.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw refuse("a command is one statement on one line")
        }
        var checker = Checker(file: file, options: ParseOptions(checksFileDevices: false))
        return try checker.command(
            text, inputs: session.inputs.map { ($0.name, $0.mediaType) }, outputs: session.outputs.map { ($0.name, OutputKind(of: $0)) }, picks: picks)
    }
}

extension Checker {
    /// Reads one action statement against a session's inputs and outputs.
    mutating func command(
        _ text: String, inputs: [(String, MediaType)], outputs: [(String, OutputKind?)], picks: [String: MediaLibrary.MediaKind] = [:]
    ) throws(PipelineDiagnostics) -> Action {
        let source = SourceText(name: file, text: text)
        sink.register(source)
        // The session's names are "declared" where the command is: it is the session as it is now.
        let here = SourceLocation(file: file, line: 1, column: 1)
        for (name, media) in inputs {
            declared.inputs[name] = InputInfo(media: media, location: here)
            everyName[name] = here
        }
        for (name, kind) in outputs {
            declared.outputs[name] = OutputInfo(kind: kind, location: here)
            everyName[name] = here
        }
        state = declared
        for (name, kind) in picks { self.picks[name] = (kind, here) }
        let logical = SourceSplitter.statements(of: source)
        let start = SourceLocation(file: file, line: 1, column: 1)
        guard logical.count == 1, let first = logical.first else {
            error(logical.isEmpty ? "the command is empty; give one action, e.g. capture-photo" : "a command is one statement", at: start)
            throw PipelineDiagnostics(sink.sorted)
        }
        var action: Action?
        if let statement = read(first) {
            if PipelineDocument.commandStatements.contains(statement.name) {
                action = readAction(statement, repeatDepth: 0)?.action
            } else {
                error(
                    "'\(statement.name)' is not a command; commands are \(PipelineDocument.commandStatements.joined(separator: ", "))", at: statement.location)
            }
        }
        guard sink.isEmpty, let action else { throw PipelineDiagnostics(sink.sorted) }
        return action
    }
}

extension ControlCommandReader {
    /// Reads one `.pipeline` action (`capture-photo, output=photo`) against the controller's session as
    /// it is now, its declarations (an added output, a trim's location) built with `document` and
    /// resolved in the session's output folder; a remote caller's names are checked against the
    /// session's folders before anything is opened (`SessionBuilder.remote`). The reader MQTT's command
    /// topic uses.
    public static func pipelineAction(document: PipelineDocument) -> ControlCommandReader {
        ControlCommandReader(maximumBytes: PipelineDocument.maximumCommandBytes) { text, controller, caller throws(Failure) in
            let action: Action
            do throws(PipelineDiagnostics) {
                action = try PipelineDocument.action(parsing: text, in: controller.session, picks: controller.pickedKinds)
            } catch {
                throw .invalid(error.diagnostics.map(\.message).joined(separator: "; "))
            }
            let folder = controller.folders.outputFolder
            var builder = SessionBuilder(document: document, outputDirectory: folder, inputDirectory: folder)
            if caller == .remote { builder.remote = controller.folders }
            let command: ControlCommand?
            do throws(CaptureError) { command = try action.command(builder: builder, session: controller.session) } catch { throw .refused(error) }
            guard let command else { throw .invalid("\(action.statementName) is not a command") }
            return command
        }
    }
}
