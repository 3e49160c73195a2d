import Capture
import Foundation

/// An error of the scenario runner itself (the session's errors are `CaptureError`s).
public enum RunnerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A `wait, event=` saw fewer matching events than it waited for before its timeout.
    case waitTimedOut(matcher: EventMatcher, wanted: Int, seen: Int, timeout: Duration)

    static let waitTimedOutName = "wait-timed-out"

    /// A stable kebab-case name, usable in `expect-error=`.
    public var name: String {
        switch self {
        case .waitTimedOut: Self.waitTimedOutName
        }
    }

    /// A sentence saying what failed.
    public var description: String {
        switch self {
        case .waitTimedOut(let matcher, let wanted, let seen, let timeout):
            "no \(matcher) event\(wanted == 1 ? "" : "s") within \(ValueSyntax.describe(timeout)): waited for \(wanted) since the run started, saw \(seen); raise timeout= if the event is slow to come"
        }
    }
}

/// An action that failed (or failed as `expect-error=` asked).
public struct ActionFailure: Hashable, Sendable, CustomStringConvertible {
    /// Where the statement is (nil for the implicit start of a file without actions).
    public var location: SourceLocation?
    /// The statement name (`capture-photo`; `input`/`output`/`overlay`/`session` when setting up the
    /// declared session failed).
    public var action: String
    /// The error's stable kebab-case name (`CaptureError.name` or `RunnerError.name`).
    public var errorName: String
    /// The error's description.
    public var message: String
    /// True when the statement carried a matching `expect-error=`: the scenario went on.
    public var expected: Bool

    /// A failure of an action.
    public init(location: SourceLocation?, action: String, errorName: String, message: String, expected: Bool) {
        self.location = location
        self.action = action
        self.errorName = errorName
        self.message = message
        self.expected = expected
    }

    /// "line 7: capture-photo failed: not-available-yet: ...".
    public var description: String {
        let place = location.map { "line \($0.line): " } ?? ""
        return "\(place)\(action) failed\(expected ? " as expected" : ""): \(errorName): \(message)"
    }
}

/// The outcome of one expectation: an `expect` statement at the end of the run, or an action with
/// `expect-error=` that succeeded (a failed expectation).
public struct ExpectationOutcome: Hashable, Sendable, CustomStringConvertible {
    /// Where the statement is.
    public var location: SourceLocation?
    /// The statement, as `.pipeline` text.
    public var statement: String
    /// True when the expectation was met.
    public var passed: Bool
    /// How many matching events the run saw (for `expect` statements).
    public var seen: Int?
    /// What was expected and what was seen.
    public var message: String

    /// An outcome.
    public init(location: SourceLocation?, statement: String, passed: Bool, seen: Int?, message: String) {
        self.location = location
        self.statement = statement
        self.passed = passed
        self.seen = seen
        self.message = message
    }

    /// "line 12: expect, event=photo-saved, count=1: expected exactly 1 'photo-saved' event, saw 0".
    public var description: String {
        (location.map { "line \($0.line): " } ?? "") + "\(statement): \(message)"
    }
}

/// Something a run reports: an event of the session, or one of the runner's own.
public struct RunnerEvent: Sendable, CustomStringConvertible {
    /// Where the event comes from.
    public enum Kind: Sendable {
        /// An event of the session (`session-started`, `frame-saved` ...).
        case session(SessionEvent)
        /// `action-failed` (`line`, `action`, `error`, `message`, and `expected` when expect-error matched).
        case actionFailed(ActionFailure)
        /// `expectation-passed` / `expectation-failed` (`line`, `expectation`, `message`, `seen`).
        case expectation(ExpectationOutcome)
        /// `notice`: something the user should know (a virtual device standing in for a missing one ...).
        case notice(String)
        /// `video-trimmed` (`source`, `location`, `mode`, `from`, `to`, `duration`, `size`, `audio`, and
        /// `library-location` when it was also saved to the album): a `trim-video` wrote its copy.
        case videoTrimmed(VideoEditor.TrimResult, libraryLocation: String?)
        /// `thumbnail-generated` (`source`, `location`, `time`, `width`, `height`): a `generate-thumbnail`
        /// saved its image.
        case thumbnailGenerated(source: String, AssetImageGenerator.Image)
        /// `library-item-picked` (`name`, `kind`, `location`, `size`, `width`, `height`, `duration` of a
        /// video): a `pick-from-library` picked an item of the album.
        case libraryItemPicked(name: String, MediaLibrary.Item)
    }

    /// The event.
    public let kind: Kind
    /// Seconds since the run started.
    public let time: Double

    /// An event at a time (seconds since the run started).
    public init(_ kind: Kind, time: Double) {
        self.kind = kind
        self.time = time
    }

    /// The event's name (the same names `wait` and `expect` use).
    public var name: String {
        switch kind {
        case .session(let event): event.name
        case .actionFailed: "action-failed"
        case .expectation(let outcome): outcome.passed ? "expectation-passed" : "expectation-failed"
        case .notice: "notice"
        case .videoTrimmed: "video-trimmed"
        case .thumbnailGenerated: "thumbnail-generated"
        case .libraryItemPicked: "library-item-picked"
        }
    }

    /// The event's payload, in a stable order.
    public var fields: [(String, EventValue)] {
        switch kind {
        case .session(let event):
            return event.fields
        case .actionFailed(let failure):
            var fields: [(String, EventValue)] = []
            if let location = failure.location { fields.append(("line", .int(location.line))) }
            fields += [("action", .string(failure.action)), ("error", .string(failure.errorName)), ("message", .string(failure.message))]
            if failure.expected { fields.append(("expected", .bool(true))) }
            return fields
        case .expectation(let outcome):
            var fields: [(String, EventValue)] = []
            if let location = outcome.location { fields.append(("line", .int(location.line))) }
            fields += [("expectation", .string(outcome.statement)), ("message", .string(outcome.message))]
            if let seen = outcome.seen { fields.append(("seen", .int(seen))) }
            return fields
        case .notice(let message):
            return [("message", .string(message))]
        case .videoTrimmed(let result, let libraryLocation):
            var fields: [(String, EventValue)] = [
                ("source", .string(result.source)), ("location", .string(result.location)), ("mode", .string(result.mode.rawValue)),
                ("from", .double(result.requestedStart)), ("to", .double(result.requestedEnd)), ("duration", .double(result.duration)),
                ("size", .int(Int(result.size))), ("audio", .bool(result.hasAudio)), ("strategy", .string(result.strategy.rawValue)),
            ]
            if let libraryLocation { fields.append(("library-location", .string(libraryLocation))) }
            return fields
        case .thumbnailGenerated(let source, let image):
            return [
                ("source", .string(source)), ("location", .string(image.location ?? "")), ("time", .double(image.actualTime)),
                ("width", .int(image.width)), ("height", .int(image.height)),
            ]
        case .libraryItemPicked(let name, let item):
            var fields: [(String, EventValue)] = [
                ("name", .string(name)), ("kind", .string(item.kind.rawValue)), ("location", .string(item.path)), ("size", .int(Int(item.size))),
            ]
            if let width = item.width, let height = item.height { fields += [("width", .int(width)), ("height", .int(height))] }
            if let duration = item.duration { fields.append(("duration", .double(duration))) }
            return fields
        }
    }

    /// One JSON object on one line: `{"event": NAME, "time": SECONDS, ...fields}`.
    public var jsonLine: String { EventFormat.json(name: name, time: time, fields: fields) }

    /// One readable line: the time, the name and the fields.
    public var readableLine: String { EventFormat.readable(name: name, time: time, fields: fields) }

    /// The event as one readable line (`readableLine`).
    public var description: String { readableLine }
}
