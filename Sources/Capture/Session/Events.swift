import Foundation

/// A value carried by an event, renderable as JSON.
public enum EventValue: Sendable, Equatable, CustomStringConvertible {
    /// Text; JSON as a quoted, escaped string.
    case string(String)
    /// A whole number.
    case int(Int)
    /// A number with a fraction: three decimals in ``description``, six significant digits in ``json``.
    case double(Double)
    /// True or false.
    case bool(Bool)
    /// A list of values (a code's corners, the inputs a commit added ...).
    case array([EventValue])
    /// Named values, in order (each code of a `codes-in-frame` event).
    case object([EventField])

    /// The value as `capture run` prints it: text unquoted, numbers with three decimals, lists in brackets.
    public var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(format: "%.3f", value)
        case .bool(let value): String(value)
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let fields): "{" + fields.map { "\($0.name): \($0.value.description)" }.joined(separator: ", ") + "}"
        }
    }

    /// The value as JSON: strings quoted and escaped, numbers that are not finite as `null`.
    public var json: String {
        switch self {
        case .string(let value): Self.jsonString(value)
        case .int(let value): String(value)
        case .double(let value): value.isFinite ? String(format: "%.6g", value) : "null"
        case .bool(let value): String(value)
        case .array(let values): "[" + values.map(\.json).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { Self.jsonString($0.name) + ":" + $0.value.json }.joined(separator: ",") + "}"
        }
    }

    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 { result += String(format: "\\u%04x", scalar.value) } else { result.unicodeScalars.append(scalar) }
            }
        }
        return result + "\""
    }
}

/// One named value of an `EventValue.object`.
public struct EventField: Sendable, Equatable {
    /// The field's name (a JSON key).
    public let name: String
    /// Its value.
    public let value: EventValue

    /// A named value.
    public init(_ name: String, _ value: EventValue) {
        self.name = name
        self.value = value
    }
}

/// Why a session was interrupted.
public enum InterruptionReason: String, Sendable {
    /// The device of an input was unplugged.
    case deviceDisconnected = "device-disconnected"
    /// The source of an input failed with an error (posted before as `runtimeError`).
    case deviceError = "device-error"
    /// Every input came to its end (a file input played to its end).
    case endOfStream = "end-of-stream"
}

/// Why a frame did not reach an output.
public enum FrameDropReason: String, Sendable {
    /// The consumer was still busy with the previous frame (`alwaysDiscardsLateVideoFrames`) or the
    /// frame arrived too late to be shown.
    case lateData = "late"
    /// No buffer was free to hold the frame.
    case outOfBuffers = "out-of-buffers"
    /// Frames went missing before they reached the session (the device or its driver dropped them).
    case discontinuity = "driver"
}

/// What a configuration commit changed on the running pipeline.
public struct ConfigurationReport: Sendable, Equatable {
    /// Inputs the commit added.
    public var addedInputs: [String] = []
    /// Inputs the commit removed.
    public var removedInputs: [String] = []
    /// Inputs whose device was restarted, with the reason.
    public var restartedInputs: [String: String] = [:]
    /// Inputs replaced by another of the same media in one block (old name -> new name): the new
    /// source took over the old one's place and the outputs it fed went on (a recording in the same file).
    public var swappedInputs: [String: String] = [:]
    /// Outputs the commit added.
    public var addedOutputs: [String] = []
    /// Outputs the commit removed.
    public var removedOutputs: [String] = []
    /// Outputs updated in place (live properties only).
    public var updatedOutputs: [String] = []
    /// True when the session was not running (nothing was applied to a pipeline).
    public var offline = false

    /// True when the commit changed nothing: no input or output added, removed, restarted, swapped or updated.
    public var isEmpty: Bool {
        addedInputs.isEmpty && removedInputs.isEmpty && restartedInputs.isEmpty && swappedInputs.isEmpty && addedOutputs.isEmpty
            && removedOutputs.isEmpty && updatedOutputs.isEmpty
    }
}

/// Something that happened in a session. `name` and `fields` are what `capture run` prints.
public struct SessionEvent: Sendable {
    /// What happened, with what the event is about.
    public enum Kind: Sendable {
        /// The session is running: its pipeline reached the playing state.
        case sessionStarted
        /// The session stopped; its recordings are finished.
        case sessionStopped
        /// A configuration was committed; the report says what it changed on the pipeline.
        case configurationCommitted(ConfigurationReport)
        /// An error while the session ran (a device that failed, an output's branch, the pipeline).
        case runtimeError(CaptureError)
        /// The session was interrupted and stopped: the reason, and the unique ID of the device it was about.
        case interrupted(InterruptionReason, device: String)
        /// The device an interruption was about is connected again.
        case interruptionEnded
        /// A session whose input reconnects started again by itself after its device came back.
        case resumed(device: String)
        /// A capture device was plugged in while the session ran.
        case deviceConnected(CaptureDevice)
        /// A capture device was unplugged while the session ran.
        case deviceDisconnected(CaptureDevice)
        /// A frame did not reach the output, and why.
        case frameDropped(output: String, reason: FrameDropReason)
        /// An image sequence output wrote a frame to `location`.
        case frameSaved(output: String, location: String)
        /// The shutter moment of a photo request.
        case photoCaptured(output: String, id: Int64)
        /// A photo request's file is written: `id` is the request's unique ID, `width` and `height` the photo's size in pixels.
        case photoSaved(output: String, id: Int64, location: String, width: Int, height: Int)
        /// The first frame of a recording is in its file; `firstTimestamp` is its running time in seconds.
        case recordingStarted(output: String, location: String, firstTimestamp: Double)
        /// `duration`: media time recorded so far, in seconds.
        case recordingPaused(output: String, location: String, duration: Double)
        /// A paused recording goes on; `duration` is the media time recorded before the pause, in seconds.
        case recordingResumed(output: String, location: String, duration: Double)
        /// The file is finished (or could not be): see `MovieRecordingResult`.
        case recordingFinished(output: String, MovieRecordingResult)
        /// A machine-readable code came into view of a metadata output (once per appearance).
        case codeDetected(output: String, MetadataMachineReadableCodeObject)
        /// The codes a metadata output with `delivery` `.everyFrame` read in one decoded frame (`time`:
        /// the frame's presentation time in seconds), with their corners in it; once an empty list when
        /// none is left.
        case codesInFrame(output: String, time: Double, codes: [MetadataMachineReadableCodeObject])
        /// A change of a device's settings reached the frames of an input streaming it: `frame` is the
        /// first frame that carries it.
        case deviceConfigured(input: String, device: String, change: String, frame: FrameStamp)
        /// A stream output listens: its RTSP path is served, or its SRT listener waits for a receiver.
        case streamReady(output: String, url: String)
        /// A client started reading a served stream (an RTSP PLAY, an SRT caller).
        case streamClientConnected(output: String, url: String, client: String)
        /// A client of a served stream left (RTSP TEARDOWN or a closed connection).
        case streamClientDisconnected(output: String, url: String, client: String)
        /// A published stream reached its server (RTSP RECORD started, the SRT connection is up).
        case streamConnected(output: String, url: String)
        /// A published stream lost its server (or could not reach it); it tries again in `retryIn` seconds.
        /// The camera and the other outputs go on.
        case streamDisconnected(output: String, url: String, reason: String, retryIn: Double)
        /// An output with a library (`save-to-library`) saved what it wrote there, or could not:
        /// `source` is the photo's or movie's own location (empty for a photo kept only in the library).
        case savedToLibrary(output: String, source: String, Result<MediaLibrary.Item, CaptureError>)
    }

    /// What happened.
    public let kind: Kind
    /// When it happened (monotonic).
    public let instant: ContinuousClock.Instant

    /// An event of `kind` that happened at `instant` (now by default).
    public init(_ kind: Kind, at instant: ContinuousClock.Instant = .now) {
        self.kind = kind
        self.instant = instant
    }

    /// The event's name as in the `.pipeline` contract.
    public var name: String {
        switch kind {
        case .sessionStarted: "session-started"
        case .sessionStopped: "session-stopped"
        case .configurationCommitted: "configuration-committed"
        case .runtimeError: "runtime-error"
        case .interrupted: "interrupted"
        case .interruptionEnded: "interruption-ended"
        case .resumed: "resumed"
        case .deviceConnected: "device-connected"
        case .deviceDisconnected: "device-disconnected"
        case .frameDropped: "frame-dropped"
        case .frameSaved: "frame-saved"
        case .photoCaptured: "photo-captured"
        case .photoSaved: "photo-saved"
        case .recordingStarted: "recording-started"
        case .recordingPaused: "recording-paused"
        case .recordingResumed: "recording-resumed"
        case .recordingFinished: "recording-finished"
        case .codeDetected: "code-detected"
        case .codesInFrame: "codes-in-frame"
        case .deviceConfigured: "device-configured"
        case .streamReady: "stream-ready"
        case .streamClientConnected: "stream-client-connected"
        case .streamClientDisconnected: "stream-client-disconnected"
        case .streamConnected: "stream-connected"
        case .streamDisconnected: "stream-disconnected"
        case .savedToLibrary: "saved-to-library"
        }
    }

    /// The output the event is about, when there is one.
    public var output: String? {
        switch kind {
        case .frameDropped(let output, _), .frameSaved(let output, _), .photoCaptured(let output, _),
            .photoSaved(let output, _, _, _, _):
            output
        case .recordingStarted(let output, _, _), .recordingPaused(let output, _, _), .recordingResumed(let output, _, _),
            .recordingFinished(let output, _), .codeDetected(let output, _), .codesInFrame(let output, _, _), .savedToLibrary(let output, _, _):
            output
        case .streamReady(let output, _), .streamClientConnected(let output, _, _), .streamClientDisconnected(let output, _, _),
            .streamConnected(let output, _), .streamDisconnected(let output, _, _, _):
            output
        default: nil
        }
    }

    /// A code's fields in `code-detected` and `codes-in-frame`: type, value and corners.
    static func fields(of code: MetadataMachineReadableCodeObject) -> [(String, EventValue)] {
        [
            ("type", .string(code.type.rawValue)), ("value", .string(code.stringValue)),
            ("corners", .array(code.corners.map { .array([.double($0.x), .double($0.y)]) })),
        ]
    }

    /// The event's payload, in a stable order.
    public var fields: [(String, EventValue)] {
        switch kind {
        case .sessionStarted, .sessionStopped, .interruptionEnded: return []
        case .configurationCommitted(let report):
            var fields: [(String, EventValue)] = []
            if !report.addedInputs.isEmpty { fields.append(("added-inputs", .array(report.addedInputs.map(EventValue.string)))) }
            if !report.removedInputs.isEmpty { fields.append(("removed-inputs", .array(report.removedInputs.map(EventValue.string)))) }
            if !report.addedOutputs.isEmpty { fields.append(("added-outputs", .array(report.addedOutputs.map(EventValue.string)))) }
            if !report.removedOutputs.isEmpty { fields.append(("removed-outputs", .array(report.removedOutputs.map(EventValue.string)))) }
            if !report.updatedOutputs.isEmpty { fields.append(("updated-outputs", .array(report.updatedOutputs.map(EventValue.string)))) }
            for (input, reason) in report.restartedInputs.sorted(by: { $0.key < $1.key }) {
                fields.append(("restarted", .string("\(input): \(reason)")))
            }
            for (old, new) in report.swappedInputs.sorted(by: { $0.key < $1.key }) {
                fields.append(("swapped", .string("\(old) -> \(new)")))
            }
            return fields
        case .runtimeError(let error):
            return [("error", .string(error.name)), ("message", .string(error.description))]
        case .interrupted(let reason, let device):
            return [("reason", .string(reason.rawValue)), ("device", .string(device))]
        case .resumed(let device):
            return [("device", .string(device))]
        case .deviceConnected(let device), .deviceDisconnected(let device):
            return [("device", .string(device.uniqueID)), ("name", .string(device.localizedName))]
        case .frameDropped(let output, let reason):
            return [("output", .string(output)), ("reason", .string(reason.rawValue))]
        case .frameSaved(let output, let location):
            return [("output", .string(output)), ("location", .string(location))]
        case .photoCaptured(let output, let id):
            return [("output", .string(output)), ("id", .int(Int(id)))]
        case .photoSaved(let output, let id, let location, let width, let height):
            return [
                ("output", .string(output)), ("id", .int(Int(id))), ("location", .string(location)),
                ("width", .int(width)), ("height", .int(height)),
            ]
        case .recordingStarted(let output, let location, let first):
            return [("output", .string(output)), ("location", .string(location)), ("first-timestamp", .double(first))]
        case .recordingPaused(let output, let location, let duration), .recordingResumed(let output, let location, let duration):
            return [("output", .string(output)), ("location", .string(location)), ("duration", .double(duration))]
        case .recordingFinished(let output, let result):
            var fields: [(String, EventValue)] = [
                ("output", .string(output)), ("location", .string(result.location)), ("duration", .double(result.duration.seconds)),
                ("size", .int(Int(result.fileSize))), ("success", .bool(result.success)),
            ]
            if let error = result.error { fields += [("error", .string(error.name)), ("message", .string(error.description))] }
            return fields
        case .codeDetected(let output, let code):
            return [("output", .string(output))] + Self.fields(of: code)
        case .codesInFrame(let output, let time, let codes):
            return [
                ("output", .string(output)), ("time", .double(time)), ("count", .int(codes.count)),
                ("codes", .array(codes.map { code in .object(Self.fields(of: code).map { EventField($0.0, $0.1) }) })),
            ]
        case .deviceConfigured(let input, let device, let change, let frame):
            var fields: [(String, EventValue)] = [("input", .string(input)), ("device", .string(device)), ("change", .string(change))]
            if let sequence = frame.sequence { fields.append(("frame", .int(Int(sequence)))) }
            if let pts = frame.presentationTime { fields.append(("pts", .double(pts.seconds))) }
            fields += [("frames-before", .int(frame.framesBefore)), ("latency", .double(frame.latency.seconds))]
            return fields
        case .streamReady(let output, let url), .streamConnected(let output, let url):
            return [("output", .string(output)), ("url", .string(url))]
        case .streamClientConnected(let output, let url, let client), .streamClientDisconnected(let output, let url, let client):
            return [("output", .string(output)), ("url", .string(url)), ("client", .string(client))]
        case .streamDisconnected(let output, let url, let reason, let retryIn):
            return [("output", .string(output)), ("url", .string(url)), ("reason", .string(reason)), ("retry-in", .double(retryIn))]
        case .savedToLibrary(let output, let source, let result):
            var fields: [(String, EventValue)] = [("output", .string(output))]
            if !source.isEmpty { fields.append(("location", .string(source))) }
            switch result {
            case .success(let item):
                fields += [("kind", .string(item.kind.rawValue)), ("library-location", .string(item.path)), ("success", .bool(true))]
            case .failure(let error):
                fields += [("success", .bool(false)), ("error", .string(error.name)), ("message", .string(error.description))]
            }
            return fields
        }
    }

    /// The value of the payload field `key` (`output`, `location` ...), or nil when the event has none of that name.
    public func field(_ key: String) -> EventValue? { fields.first { $0.0 == key }?.1 }
}

/// Receives a session's events in order, on the session's delegate queue.
public protocol CaptureSessionDelegate: AnyObject, Sendable {
    /// Called for each event of the session, in the order they happened.
    func captureSession(_ session: CaptureSession, didPost event: SessionEvent)
}
