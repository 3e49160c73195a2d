import Capture

/// How a surface turns a caller's text into a command. The syntax is the reader's (PipelineFile's
/// `ControlCommandReader.pipelineAction(document:)` reads one `.pipeline` action, as `capture run
/// --mqtt` and `capture serve --mqtt` take them); what it reads against is the live session of the
/// controller it is given, never a file's declarations. A surface that takes text (the MQTT command
/// topic) holds a reader and a controller, and knows nothing of the syntax.
public struct ControlCommandReader: Sendable {
    /// Why a text gave no command.
    public enum Failure: Error, Sendable, Equatable {
        /// The text is not a command the reader knows: why, in words.
        case invalid(String)
        /// A command, refused while it was made for the session (a name it lacks, a file outside the
        /// folders a remote caller may name).
        case refused(CaptureError)

        /// A stable kebab-case name: `invalid-command`, or the refusal's `CaptureError.name`.
        public var name: String {
            switch self {
            case .invalid: "invalid-command"
            case .refused(let error): error.name
            }
        }

        /// What went wrong, in words.
        public var message: String {
            switch self {
            case .invalid(let reason): reason
            case .refused(let error): error.description
            }
        }
    }

    /// The longest text the reader takes, in bytes of UTF-8.
    public let maximumBytes: Int
    private let read: @Sendable (String, SessionController, ControlCaller) throws(Failure) -> ControlCommand

    /// A reader of texts of at most `maximumBytes`, made into commands by `read` for a controller and
    /// the caller they come from (a remote caller's names are confined to its folders).
    public init(
        maximumBytes: Int,
        read: @escaping @Sendable (_ text: String, _ controller: SessionController, _ caller: ControlCaller) throws(Failure) -> ControlCommand
    ) {
        self.maximumBytes = maximumBytes
        self.read = read
    }

    /// The command `text` asks of `controller`'s session, for `caller`. Typed error: `Failure`.
    public func command(from text: String, for controller: SessionController, as caller: ControlCaller) throws(Failure) -> ControlCommand {
        guard text.utf8.count <= maximumBytes else {
            throw .invalid("the command has \(text.utf8.count) bytes; a command may have at most \(maximumBytes)")
        }
        return try read(text, controller, caller)
    }
}
