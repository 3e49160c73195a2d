import Capture
import Foundation

/// One action given as text from outside a file (an MQTT command, a line typed at a prompt), read by the
/// same checker as a `.pipeline` statement and never anything else: the text is split, read and checked
/// as one statement against the document's declarations, and the result is an `Action` value.
extension PipelineDocument {
    /// The longest command text taken, in bytes.
    public static let maximumCommandBytes = 4096

    /// The statements a command may be: the actions `ScenarioRunner.interact(_:)` performs (not
    /// `wait`, `expect`, `repeat` or a configuration block, which belong to a scenario).
    public static let commandStatements = Vocabulary.actions.filter {
        !["wait", "expect", "repeat", "begin-configuration", "commit-configuration"].contains($0)
    }

    /// Reads `text` as one action statement (`capture-photo, output=photo`) of this document: its names
    /// must be the document's inputs and outputs, its keys those of the action. Typed error: the
    /// diagnostics, as for a file (`file` names the source in them).
    public func action(parsing text: String, file: String = "<command>") throws(PipelineDiagnostics) -> Action {
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
        return try checker.command(text, document: self)
    }
}

extension Checker {
    /// Reads one action statement against the document's declarations.
    mutating func command(_ text: String, document: PipelineDocument) throws(PipelineDiagnostics) -> Action {
        let source = SourceText(name: file, text: text)
        sink.register(source)
        for input in document.inputs {
            declared.inputs[input.name] = InputInfo(media: input.knownMedia, location: input.location ?? SourceLocation(file: file, line: 0, column: 0))
            everyName[input.name] = declared.inputs[input.name]?.location
        }
        for output in document.outputs {
            declared.outputs[output.name] = OutputInfo(kind: output.kind, location: output.location ?? SourceLocation(file: file, line: 0, column: 0))
            everyName[output.name] = declared.outputs[output.name]?.location
        }
        state = declared
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
